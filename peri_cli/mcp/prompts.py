"""Server prompts as slash commands `/mcp__<server>__<prompt> [args]`: listing, arguments, text."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from peri_cli.base.textsafe import scrub_surrogates
from peri_cli.mcp.names import prompt_command
from peri_cli.mcp.results import describe_block


@dataclass(frozen=True)
class PromptArg:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class McpPrompt:
    """One prompt; `description` and argument texts come from the server (untrusted: show them
    through `textsafe.visible`)."""

    server: str
    name: str
    command: str  # without the leading `/`
    description: str
    arguments: tuple[PromptArg, ...] = ()

    @property
    def argument_hint(self) -> str:
        return " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in self.arguments)


@dataclass(frozen=True)
class PromptText:
    """The prompt's messages as (role, text); `text` is what a user message would carry."""

    messages: tuple[tuple[str, str], ...]

    @property
    def text(self) -> str:
        return "\n\n".join(text for _role, text in self.messages if text)


class PromptArgumentError(ValueError):
    """Arguments that do not fit the prompt; the message says what it takes."""


def prompt_from_sdk(server: str, prompt: Any) -> McpPrompt:
    args = tuple(
        PromptArg(a.name, a.description or "", bool(a.required)) for a in prompt.arguments or []
    )
    return McpPrompt(
        server=server,
        name=prompt.name,
        command=prompt_command(server, prompt.name),
        description=prompt.description or "",
        arguments=args,
    )


def prompt_arguments(prompt: McpPrompt, text: str) -> dict[str, str]:
    """`/cmd a "b c" d...`: words fill the arguments in order (quotes group words; the last
    argument takes the rest); a missing required one is an error naming it."""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    names = [a.name for a in prompt.arguments]
    values: dict[str, str] = {}
    if names and len(words) > len(names):
        words = [*words[: len(names) - 1], " ".join(words[len(names) - 1 :])]
    elif not names and words:
        raise PromptArgumentError(f"/{prompt.command} takes no arguments")
    for name, word in zip(names, words, strict=False):
        values[name] = word
    missing = [a.name for a in prompt.arguments if a.required and a.name not in values]
    if missing:
        usage = f"/{prompt.command} {prompt.argument_hint}"
        raise PromptArgumentError(f"/{prompt.command} needs {', '.join(missing)}: {usage}")
    return values


def render_prompt(result: Any) -> PromptText:
    """The SDK's GetPromptResult as text per message (images and other blocks described)."""
    messages = tuple(
        (str(m.role), scrub_surrogates(describe_block(m.content))) for m in result.messages
    )
    return PromptText(messages)
