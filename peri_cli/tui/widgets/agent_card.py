"""A SubAgent's card in the conversation: the view of its `Agent` call, paired to the child by the
call's `tool_use` id (parallel spawns arrive interleaved, so never by order). The title says the
child's type, description, state, latest tool call, elapsed time and tokens; expanded, the task,
the child's tool calls as a tree, and its report.

The card knows nothing of the core: the app's `AgentBoard` (found as `app.agent_board`) tells
it about its child (`show_child`) when it is mounted and whenever the child changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from peri_cli.tui.format import elapsed, one_line, plain, tokens
from peri_cli.tui.markdown.blocks import parse
from peri_cli.tui.tool_text import GLYPHS, NO_LOOK, ToolLook, outcome, trim_output
from peri_cli.tui.widgets.markdown_chunk import MarkdownChunk
from peri_cli.tui.widgets.tool_call import ToolCallView

if TYPE_CHECKING:
    from peri_cli.tui.agent_board import ChildInfo

TREE_LINES = 40  # the newest tool calls a card's tree shows
CHILD_GLYPHS: dict[str, tuple[str, str]] = {
    "queued": ("○", "dim"),
    "running": ("◐", "yellow"),
    "done": ("●", "green"),
    "failed": ("✗", "red"),
    "interrupted": ("■", "yellow"),
}


class _Board(Protocol):
    def attach(self, card: Any) -> None: ...
    def detach(self, card: Any) -> None: ...


def state_glyph(state: str) -> tuple[str, str]:
    return CHILD_GLYPHS.get(state, ("?", "dim"))


def child_summary(
    info: ChildInfo, now: float, *, width: int = 60, glyph: bool = True
) -> list[Content]:
    """The pieces after a child's name: state, latest tool, elapsed, tokens (shared with the
    agent strip and the pane's header)."""
    mark, style = state_glyph(info.state)
    state = plain(info.state + (f" ({one_line(info.detail, 50)})" if info.detail else ""), style)
    pieces = [Content.assemble((mark, style), " ", state) if glyph else state]
    if info.last_tool:
        pieces.append(plain(one_line(info.last_tool, width), "dim"))
    spent = info.elapsed(now)
    if spent is not None:
        pieces.append(Content(elapsed(spent)))
    if info.tokens:
        pieces.append(Content(f"{tokens(info.tokens)} tokens"))
    return pieces


class AgentCard(ToolCallView):
    DEFAULT_CSS = """
    AgentCard { border-left: outer $accent 60%; }
    AgentCard > .fold--body { padding: 0 0 0 2; }
    AgentCard .agent-tree { color: $text-muted; }
    AgentCard .result { color: $foreground; }
    """

    def __init__(
        self,
        call_id: str,
        tool_input: dict[str, Any] | None = None,
        *,
        look: ToolLook = NO_LOOK,
        clock: Any = None,
    ) -> None:
        self.info: ChildInfo | None = None
        self._report_markdown: str | None = None  # the report's text, drawn as Markdown
        self._markdown: MarkdownChunk | None = None
        self._markdown_shown: str | None = None
        self._tree: Static | None = None
        self._clock = clock
        super().__init__(call_id, "Agent", tool_input, look=look)

    # --- the board ------------------------------------------------------------------------

    def _board(self) -> _Board | None:
        board = getattr(self.app, "agent_board", None)
        return board if hasattr(board, "attach") else None

    def on_mount(self) -> None:
        board = self._board()
        if board is not None:
            board.attach(self)

    def on_unmount(self) -> None:
        board = self._board()
        if board is not None:
            board.detach(self)

    def show_child(self, info: ChildInfo | None) -> None:
        """What is known about the child now (None: no child was started for this call)."""
        self.info = info
        self._result_text = self._report()
        self._sync_tree()
        self._sync_body()
        self._refresh_title()

    def _now(self) -> float:
        clock = self._clock or getattr(self.app, "clock", None)
        if clock is None:
            import time

            return time.time()
        return float(clock())

    # --- drawing ----------------------------------------------------------------------------

    def _refresh_title(self) -> None:
        info = self.info
        tool_input = self.tool_input or {}
        kind = info.type if info else str(tool_input.get("subagent_type") or "general")
        what = info.description if info else str(tool_input.get("description") or "")
        if info is not None:
            glyph, style = state_glyph(info.state)
        else:
            glyph, style = GLYPHS[self.state]
        parts: list[Content | str | tuple[str, str]] = [(glyph, style), " "]
        parts.append(plain(kind, "bold"))
        if info is not None and info.background:
            parts.append((" (background)", "dim"))
        if what:
            parts += [" · ", plain(one_line(what, 60))]
        if info is not None:
            now = self._now() if self.is_attached else 0.0
            for piece in child_summary(info, now, width=50, glyph=False):
                parts += [" · ", piece]
        elif self.output is not None:
            said = outcome(self.name_, self.output, self.state == "error")
            parts.append(plain(f" → {said}", "dim"))
        elif self.state == "cancelled":
            parts.append((" → cancelled", "dim"))
        self.title = Content.assemble(*parts)

    def build_body(self) -> list[Widget]:
        body = super().build_body()  # the task (detail), a diff (never), the label (result)
        self._tree = Static("", classes="agent-tree")
        self._markdown = MarkdownChunk()
        self._sync_tree()
        self._sync_body()
        return [body[0], self._tree, body[2], self._markdown]

    def _sync_body(self) -> None:
        super()._sync_body()
        markdown = self._markdown
        if markdown is None:
            return
        source = self._report_markdown or ""
        if source != self._markdown_shown:  # parsed again only when it changes
            self._markdown_shown = source
            markdown.show(parse(source) if source else [])
        markdown.display = bool(source)

    def _sync_tree(self) -> None:
        if self._tree is None:
            return
        info = self.info
        lines = list(info.tools.values()) if info else []
        self._tree.display = bool(lines)
        if not lines:
            return
        rows: list[Content] = []
        shown = lines[-TREE_LINES:]
        if len(lines) > len(shown):
            rows.append(Content.styled(f"… {len(lines) - len(shown)} earlier tool calls", "dim"))
        for i, line in enumerate(shown):
            branch = "└─ " if i == len(shown) - 1 else "├─ "
            glyph, style = GLYPHS[line.state]
            parts: list[Content | str | tuple[str, str]] = [branch, (glyph, style), " "]
            parts.append(plain(line.name, "bold"))
            if line.summary:
                parts += ["(", plain(line.summary), ")"]
            if line.output is not None:
                said = outcome(line.name, line.output, line.state == "error")
                parts.append(plain(f" → {said}", "dim"))
            rows.append(Content.assemble(*parts))
        self._tree.update(Content("\n").join(rows))

    def set_input(self, tool_input: dict[str, Any] | None) -> None:
        super().set_input(tool_input)
        prompt = (self.tool_input or {}).get("prompt")
        if isinstance(prompt, str):  # the task, as the child received it
            shown, more = trim_output(prompt, 20)
            rest = plain(f"\n… {more} more lines", "italic") if more else Content("")
            self._detail_text = Content.assemble(("Task: ", "bold"), plain(shown), rest)
            self._sync_body()

    def set_result(self, output: str, is_error: bool) -> None:
        """The report the parent read (or why there is none); the state in the title says how
        the child ended, so the card stays folded."""
        self.output = output
        self.state = "error" if is_error else "done"
        self._result_text = self._report()
        self._sync_body()
        self.set_class(is_error, "-error")
        self._refresh_title()

    def _report(self) -> Content | None:
        """The report: the call's result (what the parent read); for a background child, its
        last message once it ended (the call's result only said it started); for a child
        whose call left no result (a resumed session), its last message."""
        info, text, label = self.info, self.output, ""
        ended = info is not None and not info.running
        if info is not None and (info.background or text is None):
            text, label = (info.report or None) if ended else None, "Report"
        self._report_markdown = None
        if text is None:
            return None
        shown, more = trim_output(text, 200)
        if self.state == "error":  # why there is no report: as it was said, plain
            rest = plain(f"\n… {more} more lines", "italic") if more else Content("")
            return Content.assemble(plain(shown), rest)
        # a report is Markdown, drawn as the replies are
        self._report_markdown = shown + (f"\n\n*… {more} more lines*" if more else "")
        return Content.styled(label, "bold") if label else None
