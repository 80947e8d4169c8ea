"""One tool call: a one-line title with its state, expandable to the input and the result.

Every piece is built from `Content` (untrusted text through `format.plain`), never markup. The
body's three parts exist from the first expand on and are only updated afterwards, so an event
arriving while the body is still being mounted cannot race it."""

from __future__ import annotations

import json
from typing import Any

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from peri_cli.tui.diffs import diff_for
from peri_cli.tui.format import one_line, plain
from peri_cli.tui.tool_text import (
    GLYPHS,
    NO_LOOK,
    PROGRESS_LINES,
    State,
    ToolLook,
    main_arg,
    outcome,
    summarize_input,
    tail_output,
    trim_output,
)
from peri_cli.tui.widgets.diff_view import DiffView
from peri_cli.tui.widgets.fold import Fold

OPEN_DIFF_LINES = 200  # a longer diff starts folded in the conversation (the approval shows all)


class ToolCallView(Fold):
    DEFAULT_CSS = """
    ToolCallView { margin: 1 0 0 0; }
    ToolCallView > .fold--body { padding: 0 0 0 4; }
    ToolCallView .detail { color: $text-muted; }
    ToolCallView .result { color: $text-muted; }
    ToolCallView.-error .result { color: $error; }
    """

    def __init__(
        self,
        call_id: str,
        name: str,
        tool_input: dict[str, Any] | None = None,
        *,
        look: ToolLook = NO_LOOK,
    ) -> None:
        super().__init__()
        self.call_id = call_id
        self.name_ = name
        self.look = look
        self.tool_input: dict[str, Any] | None = None
        self.state: State = "pending"
        self.output: str | None = None
        self._detail_text: Content | None = None  # the input beyond the title, when there is more
        self._diff_lines: list[str] | None = None
        self._result_text: Content | None = None  # the result, when the title cannot hold it
        self._detail: Static | None = None  # the body's widgets, built on the first expand
        self._diff: DiffView | None = None
        self._result: Static | None = None
        self._folded_before_progress: bool | None = None  # set when live output opened it
        self.set_input(tool_input)

    def build_body(self) -> list[Widget]:
        self._detail = Static(self._detail_text or "", classes="detail")
        self._diff = DiffView(self._diff_lines or [])
        self._result = Static(self._result_text or "", classes="result")
        self._sync_body()
        return [self._detail, self._diff, self._result]

    def _sync_body(self) -> None:
        """Show what is known now in the body's (already built) parts."""
        if self._detail is not None:
            self._detail.update(self._detail_text or "")
            self._detail.display = self._detail_text is not None
        if self._diff is not None:
            if self._diff_lines is not None and self._diff.lines is not self._diff_lines:
                self._diff.show(self._diff_lines)
            self._diff.display = self._diff_lines is not None
        if self._result is not None:
            self._result.update(self._result_text or "")
            self._result.display = self._result_text is not None

    def _refresh_title(self) -> None:
        glyph, style = GLYPHS[self.state]
        parts: list[Content | str | tuple[str, str]] = [(glyph, style), " "]
        parts.append(plain(self.name_, "bold"))
        args = summarize_input(self.name_, self.tool_input, self.look)
        if args:
            parts += ["(", plain(args), ")"]
        if self.output is not None:
            said = outcome(self.name_, self.output, self.state == "error")
            parts.append(plain(f" → {said}", "dim"))
        elif self.state == "cancelled":
            parts.append((" → cancelled", "dim"))
        self.title = Content.assemble(*parts)

    @property
    def short_diff(self) -> bool:
        """A diff short enough to be shown open (an approval folded it while it asked)."""
        return self._diff_lines is not None and len(self._diff_lines) <= OPEN_DIFF_LINES

    def set_input(self, tool_input: dict[str, Any] | None) -> None:
        if tool_input is None or self.tool_input is not None:
            self._refresh_title()
            return
        self.tool_input = tool_input
        diff = diff_for(self.name_, tool_input)
        if diff is not None:
            self._diff_lines = diff
            if len(diff) <= OPEN_DIFF_LINES:
                self.collapsed = False
        key = self.look.card_arg(self.name_)
        extra = {k: v for k, v in tool_input.items() if k != key}
        if diff is not None:
            extra = {
                k: v for k, v in extra.items() if k not in ("old_string", "new_string", "content")
            }
        arg = main_arg(self.name_, tool_input, self.look)
        summary = summarize_input(self.name_, tool_input, self.look)
        parts: list[str] = []
        if arg is not None and ("\n" in arg or one_line(arg, 10**9) != summary):
            parts.append(arg)  # the title holds only a preview of it
        if arg is None and diff is None:
            extra = tool_input
        if extra:
            parts.append(json.dumps(extra, ensure_ascii=False, indent=1, default=str))
        if parts:
            shown, more = trim_output("\n".join(parts), 40)
            self._detail_text = plain(shown + (f"\n… {more} more lines" if more else ""))
        self._sync_body()
        self._refresh_title()

    def set_progress(self, text: str) -> None:
        """A running call's output so far (its tail): shown open in the body while it runs."""
        if self.output is not None:
            return
        shown, earlier = tail_output(text, PROGRESS_LINES)
        body = Content("")
        if earlier:
            body = plain(f"… {earlier} earlier lines\n", "italic")
        self._result_text = body + plain(shown)
        if self._folded_before_progress is None:
            self._folded_before_progress = self.collapsed
            self.collapsed = False
        self._sync_body()

    def set_state(self, state: State) -> None:
        self.state = state
        self._refresh_title()

    def set_result(self, output: str, is_error: bool) -> None:
        self.output = output
        self.state = "error" if is_error else "done"
        if self.name_ == "Bash":
            shown, earlier = tail_output(output)
            body = Content("")
            if earlier:
                body = plain(f"… {earlier} earlier lines (the end is shown)\n", "italic")
            body += plain(shown)
        else:
            shown, more = trim_output(output)
            body = plain(shown)
            if more:
                body += plain(f"\n… {more} more lines", "italic")
        # a one-line result is all in the title already
        multi_line = "\n" in output.strip() or len(output.strip()) > 50
        self._result_text = body if multi_line else None
        self._sync_body()
        self.set_class(is_error, "-error")
        if self._folded_before_progress is not None:  # folded again as it was before it ran
            self.collapsed = self._folded_before_progress
        if is_error:
            self.collapsed = False
        self._refresh_title()
