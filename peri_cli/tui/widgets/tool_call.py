"""One tool call: a one-line title with its state, expandable to the input and a trimmed result."""

from __future__ import annotations

import json
from typing import Any, Literal

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from peri_cli.tui.format import markup, one_line
from peri_cli.tui.widgets.diff_view import DiffView, diff_for
from peri_cli.tui.widgets.fold import Fold

RESULT_LINES = 12
LINE_CHARS = 240
State = Literal["pending", "running", "done", "error", "cancelled"]
GLYPHS: dict[State, str] = {
    "pending": "[dim]○[/]",
    "running": "[yellow]◐[/]",
    "done": "[green]●[/]",
    "error": "[red]✗[/]",
    "cancelled": "[yellow]■[/]",
}
_MAIN_ARG = {
    "Bash": "command",
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "Glob": "pattern",
    "Grep": "pattern",
}


def summarize_input(name: str, tool_input: dict[str, Any] | None) -> str:
    if not tool_input:
        return ""
    key = _MAIN_ARG.get(name)
    if key and isinstance(tool_input.get(key), str):
        return one_line(tool_input[key], 70)
    return one_line(json.dumps(tool_input, ensure_ascii=False, default=str), 70)


def trim_output(output: str, max_lines: int = RESULT_LINES) -> tuple[str, int]:
    """The first lines of a result (long lines cut) and how many lines were left out."""
    lines = output.rstrip("\n").splitlines() or [""]
    shown = [ln if len(ln) <= LINE_CHARS else ln[:LINE_CHARS] + "…" for ln in lines[:max_lines]]
    return "\n".join(shown), max(0, len(lines) - max_lines)


def outcome(output: str, is_error: bool) -> str:
    lines = output.strip().splitlines()
    if is_error:
        return one_line(lines[0], 60) if lines else "error"
    if not lines:
        return "no output"
    return one_line(lines[0], 50) if len(lines) == 1 else f"{len(lines)} lines"


class ToolCallView(Fold):
    DEFAULT_CSS = """
    ToolCallView { margin: 1 0 0 0; }
    ToolCallView > .fold--body { padding: 0 0 0 4; }
    ToolCallView .detail { color: $text-muted; }
    ToolCallView .result { color: $text-muted; }
    ToolCallView.-error .result { color: $error; }
    """

    def __init__(self, call_id: str, name: str, tool_input: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.call_id = call_id
        self.name_ = name
        self.tool_input: dict[str, Any] | None = None
        self.state: State = "pending"
        self.output: str | None = None
        self._detail_text: Text | None = None  # the input beyond the title, when there is more
        self._result_text: Text | None = None  # the trimmed result, when the title cannot hold it
        self._diff: DiffView | None = None
        self._detail: Static | None = None  # the body's widgets, built on the first expand
        self._result: Static | None = None
        self.set_input(tool_input)

    def build_body(self) -> list[Widget]:
        self._detail = Static(self._detail_text or "", classes="detail")
        self._detail.display = self._detail_text is not None
        self._result = Static(self._result_text or "", classes="result")
        self._result.display = self._result_text is not None
        return [self._detail, *([self._diff] if self._diff else []), self._result]

    def _refresh_title(self) -> None:
        args = summarize_input(self.name_, self.tool_input)
        title = f"{GLYPHS[self.state]} [b]{markup(self.name_)}[/b]"
        if args:
            title += f"({markup(args)})"
        if self.output is not None:
            title += f" [dim]→ {markup(outcome(self.output, self.state == 'error'))}[/]"
        elif self.state == "cancelled":
            title += " [dim]→ cancelled[/]"
        self.title = title

    def set_input(self, tool_input: dict[str, Any] | None) -> None:
        if tool_input is None or self.tool_input is not None:
            self._refresh_title()
            return
        self.tool_input = tool_input
        diff = diff_for(self.name_, tool_input)
        if diff is not None and self._diff is None:
            self._diff = DiffView(diff)
            if self.body is not None and self._detail is not None:
                self.body.mount(self._diff, after=self._detail)
            self.collapsed = False
        key = _MAIN_ARG.get(self.name_)
        extra = {k: v for k, v in tool_input.items() if k != key}
        if self.name_ in ("Edit", "Write"):
            extra = {
                k: v for k, v in extra.items() if k not in ("old_string", "new_string", "content")
            }
        if extra or len(summarize_input(self.name_, tool_input)) >= 69:
            text = json.dumps(
                tool_input if self._diff is None else extra,
                ensure_ascii=False,
                indent=1,
                default=str,
            )
            self._detail_text = Text(trim_output(text, 20)[0])
            if self._detail is not None:
                self._detail.update(self._detail_text)
                self._detail.display = True
        self._refresh_title()

    def set_state(self, state: State) -> None:
        self.state = state
        self._refresh_title()

    def set_result(self, output: str, is_error: bool) -> None:
        self.output = output
        self.state = "error" if is_error else "done"
        shown, more = trim_output(output)
        body = Text(shown)
        if more:
            body.append(f"\n… {more} more lines", style="italic")
        # a one-line result is all in the title already
        multi_line = "\n" in output.strip() or len(output.strip()) > 50
        self._result_text = body if multi_line else None
        if self._result is not None:
            self._result.update(body)
            self._result.display = multi_line
        self.set_class(is_error, "-error")
        if is_error:
            self.collapsed = False
        self._refresh_title()
