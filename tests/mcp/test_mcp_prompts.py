"""Server prompts as slash commands: listing shape, arguments from the command line, text."""

from __future__ import annotations

import mcp_types as t
import pytest

from peri_cli.mcp.prompts import (
    PromptArgumentError,
    prompt_arguments,
    prompt_from_sdk,
    render_prompt,
)

REVIEW = prompt_from_sdk(
    "my.git",
    t.Prompt(
        name="review",
        description="Review a file",
        arguments=[
            t.PromptArgument(name="path", required=True),
            t.PromptArgument(name="focus", description="what to look for"),
        ],
    ),
)


def test_listing() -> None:
    assert REVIEW.command == "mcp__my_git__review"
    assert (REVIEW.server, REVIEW.name) == ("my.git", "review")
    assert REVIEW.argument_hint == "<path> [focus]"


def test_arguments_fill_in_order_and_the_last_takes_the_rest() -> None:
    assert prompt_arguments(REVIEW, "a.py") == {"path": "a.py"}
    assert prompt_arguments(REVIEW, '"my file.py" bugs and style') == {
        "path": "my file.py",
        "focus": "bugs and style",
    }
    assert prompt_arguments(REVIEW, "it's.py x") == {"path": "it's.py", "focus": "x"}


def test_missing_or_unwanted_arguments() -> None:
    with pytest.raises(PromptArgumentError, match=r"needs path: /mcp__my_git__review <path>"):
        prompt_arguments(REVIEW, "  ")
    bare = prompt_from_sdk("s", t.Prompt(name="hello"))
    assert prompt_arguments(bare, "") == {}
    with pytest.raises(PromptArgumentError, match="takes no arguments"):
        prompt_arguments(bare, "x")


def test_render() -> None:
    result = t.GetPromptResult(
        messages=[
            t.PromptMessage(role="user", content=t.TextContent(text="Review a.py")),
            t.PromptMessage(
                role="assistant", content=t.ImageContent(data="AA==", mime_type="image/png")
            ),
        ]
    )
    text = render_prompt(result)
    assert text.messages == (("user", "Review a.py"), ("assistant", "[image (image/png)]"))
    assert text.text == "Review a.py\n\n[image (image/png)]"
