"""A tool round's results as they leave it: stored (no lone surrogates) and shown (one event)."""

from __future__ import annotations

from typing import Any

from peri_cli.base.events import ToolFinished
from peri_cli.base.messages import TextPart, ToolUsePart
from peri_cli.base.textsafe import scrub_surrogates
from peri_cli.base.tool import ToolOutput


def clean_content(content: list[Any]) -> list[Any]:
    """Tool output as the transcript can store it (no lone surrogates)."""
    return [
        TextPart(text=scrub_surrogates(p.text)) if isinstance(p, TextPart) else p for p in content
    ]


def finished_event(use: ToolUsePart, output: ToolOutput | None) -> ToolFinished:
    """The call's result as faces show it (no result at all: an error saying so)."""
    output = output or ToolOutput.error("the tool produced no result")
    text = "".join(p.text if isinstance(p, TextPart) else "[image]" for p in output.content)
    return ToolFinished(use.id, use.name, scrub_surrogates(text), output.is_error)
