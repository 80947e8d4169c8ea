"""Routes the loop's events to the widgets: the one `match event:` of the TUI."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.widget import Widget

from peri_cli.base.events import (
    USER_SHELL_ID,
    AssistantMessage,
    Compacted,
    CompactFailed,
    CompactWarning,
    Event,
    Notice,
    PermissionRequested,
    ToolCall,
    ToolFinished,
    ToolProgress,
    TurnEnded,
    TurnStarted,
    UsageSpent,
)
from peri_cli.base.messages import Message, Usage
from peri_cli.base.provider import TextDelta, ThinkingDelta, ToolUseStarted
from peri_cli.base.retry import Retrying
from peri_cli.context.todos import TODO_TOOL, parse_todos
from peri_cli.tui.markdown.blocks import warm as warm_markdown
from peri_cli.tui.tool_text import NO_LOOK, ToolLook
from peri_cli.tui.widgets.agent_card import AgentCard
from peri_cli.tui.widgets.approval_dock import ApprovalDock
from peri_cli.tui.widgets.assistant_message import AssistantMessage as AssistantView
from peri_cli.tui.widgets.conversation import Conversation
from peri_cli.tui.widgets.folded_text import FoldedText
from peri_cli.tui.widgets.notice import Level, NoticeLine
from peri_cli.tui.widgets.permission_prompt import ApprovalRecord, PermissionPrompt
from peri_cli.tui.widgets.separator import Separator
from peri_cli.tui.widgets.status_bar import StatusBar
from peri_cli.tui.widgets.todo_strip import TodoStrip
from peri_cli.tui.widgets.tool_call import ToolCallView

CostOf = Callable[[Usage], float | None]
SummaryOf = Callable[[], str]
# A stopped turn is one dim line: the model's note about it (what ran, what was not kept) is for
# the model; on screen the reply stays where it stopped.
INTERRUPTED = "Interrupted"
BRING_BACK = "Up brings it back to edit."  # a prompt the provider refused (agent/refusals)

_END_NOTICES: dict[str, Level] = {
    "max_turns": "warning",
    "compact_stalled": "warning",
    "error": "error",
}


def add_cost(total: float | None, more: float | None) -> float | None:
    return None if total is None or more is None else total + more


MAX_DIFFED_BYTES = 1 << 20  # a larger file's approval shows the call's own strings, unnumbered


def changed_file_text(tool: str, tool_input: dict[str, Any], workspace: Path | None) -> str | None:
    """The text of the file an Edit or a Write would change, for its approval's numbered diff;
    None when it does not exist or cannot be read as text here (a FIFO is never waited for)."""
    from peri_cli.base.safe_read import SafeReadError, read_bytes

    raw = tool_input.get("file_path")
    if tool not in ("Edit", "Write") or not isinstance(raw, str) or not raw or "\0" in raw:
        return None
    path = Path(raw).expanduser()
    if not path.is_absolute() and workspace is not None:
        path = workspace / path
    try:
        data = read_bytes(path, max_bytes=MAX_DIFFED_BYTES)
    except (SafeReadError, OSError, ValueError):
        return None
    return None if b"\0" in data[:8192] else data.decode("utf-8", errors="replace")


def make_prompt(event: PermissionRequested, workspace: Path | None) -> PermissionPrompt:
    """The approval for a request, the main agent's or a SubAgent's (labelled with its name)."""
    return PermissionPrompt(
        event.tool,
        event.input,
        event.reason,
        event.future,
        workspace=workspace,
        agent=getattr(event, "agent", None),
        request=event,
        current=changed_file_text(event.tool, event.input, workspace),
    )


class Bridge:
    """Consumes one run of events (a turn or a compaction) and shows it as it happens."""

    def __init__(
        self,
        conversation: Conversation,
        status: StatusBar,
        cost_of: CostOf,
        *,
        approvals: ApprovalDock,
        look: ToolLook = NO_LOOK,
        summary: SummaryOf = lambda: "",
        on_ask: Callable[[PermissionPrompt], object] = lambda prompt: prompt.focus(),
        on_question: Callable[[PermissionRequested], Awaitable[None]] | None = None,
        todos: TodoStrip | None = None,
    ) -> None:
        self.conversation = conversation
        self.status = status
        self.cost_of = cost_of
        self.approvals = approvals
        self.look = look
        self.summary = summary  # the text of the last Full compact's summary
        self.on_ask = on_ask  # gives a new approval the keyboard (or says how to reach it)
        self.on_question = on_question  # opens the picker for a question with options
        self.todos = todos  # the task list above the prompt
        self._todo_inputs: dict[str, object] = {}  # running TodoWrite calls' lists
        self._reset()

    def _reset(self) -> None:
        self.assistant: AssistantView | None = None
        self.thinking: FoldedText | None = None
        self.tools: dict[str, ToolCallView] = {}
        self.attempt: list[Widget] = []  # widgets of the current model call, dropped on a retry
        self.prompts: list[PermissionPrompt] = []

    async def run(self, events: AsyncIterator[Event]) -> TurnEnded:
        """Show every event; on cancellation stop the run and say so. Returns how it ended."""
        self._reset()
        warm_markdown()  # built while the model thinks, not in the first reply's frame
        ended = TurnEnded("done")
        try:
            async for event in events:
                await self.handle(event)
                self.follow_todos(event)
                if isinstance(event, TurnEnded):
                    ended = event
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await events.aclose()  # type: ignore[attr-defined]  # stops running tools
            ended = TurnEnded("cancelled")
        except Exception as e:  # a bug or a broken provider must not take the TUI down
            ended = TurnEnded("error", f"{type(e).__name__}: {e}")
        finally:
            await self._finish_text()
        await self._ended(ended)
        return ended

    async def _ended(self, ended: TurnEnded) -> None:
        if ended.reason == "done" or not self.conversation.is_attached:
            return  # (the app is closing: nothing left to show it on)
        if ended.reason in ("cancelled", "error"):
            await self._interrupted()
        if ended.reason == "cancelled":
            await self._notice(INTERRUPTED, "info")
            return
        text = f"Stopped: {ended.line}"
        if ended.left_out == "prompt":
            text += " " + BRING_BACK
        await self._notice(text, _END_NOTICES.get(ended.reason, "warning"))

    async def _interrupted(self) -> None:
        if self.assistant is not None:
            await self.assistant.interrupt("(interrupted)")
            self.assistant = None
        for view in self.tools.values():
            if view.output is None:
                view.set_state("cancelled")
        for prompt in self.prompts:
            prompt.cancel()
        await self._record_answers()

    async def _record_answers(self) -> None:
        """Each answered approval leaves a line in the conversation, where it was asked (before
        anything the answer led to)."""
        for prompt in [p for p in self.prompts if p.answered]:
            self.prompts.remove(prompt)
            await self.conversation.add(ApprovalRecord(prompt.tool, prompt.answer, prompt.note))

    async def _notice(self, text: str, level: Level = "info") -> None:
        await self.conversation.add(NoticeLine(text, level))
        self.conversation.note_output()

    async def finish_run(self, *, cancelled: bool = False) -> None:
        """A run shown event by event (a SubAgent's, in its pane) ended: draw the rest of its
        text; if it was stopped, mark what was still running as cancelled."""
        await self._finish_text()
        if cancelled:
            await self._interrupted()

    async def _finish_text(self) -> None:
        if self.assistant is not None:
            await self.assistant.finish()

    def follow_todos(self, event: Event) -> None:
        """A TodoWrite call that succeeded sets the task list above the prompt (or a SubAgent's
        pane's) to its input."""
        if self.todos is None:
            return
        if isinstance(event, ToolCall) and event.name == TODO_TOOL:
            self._todo_inputs[event.id] = event.input.get("todos")
        elif isinstance(event, ToolFinished) and event.id in self._todo_inputs:
            given = self._todo_inputs.pop(event.id)
            if not event.is_error:
                self.todos.show(parse_todos(given))

    async def _mount(self, widget: Widget) -> None:
        self.attempt.append(widget)
        await self.conversation.add(widget)

    async def handle(self, event: Event) -> None:  # noqa: C901, PLR0912 - one case per event
        """The one place that decides how each event looks."""
        if self.prompts:
            await self._record_answers()
        match event:
            case TurnStarted():
                await self._finish_text()
                self.assistant, self.thinking, self.attempt = None, None, []
                self.status.busy("thinking")
            case ThinkingDelta(text=text):
                self.status.count_output(text)
                await self._thinking(text)
            case TextDelta(text=text):
                self.status.count_output(text)
                await self._text(text)
            case ToolUseStarted(id=call_id, name=name):
                await self._finish_text()
                await self._tool(call_id, name, mount_in_attempt=True)
                self.status.busy(f"preparing {name}")
            case Retrying(attempt=attempt, delay=delay, reason=reason, max_attempts=most):
                await self._discard_attempt()  # transient: the status says it, until the next
                self.status.busy(f"retrying ({attempt}/{most}) in {delay:.1f}s: {reason}")
            case PermissionRequested():
                await self._ask(event)
            case ToolCall(id=call_id, name=name, input=tool_input):
                view = await self._tool(call_id, name)
                view.set_input(tool_input)
                if call_id.startswith(USER_SHELL_ID) or view.short_diff:  # shown open
                    view.collapsed = False
                view.set_state("running")
                self.status.busy(f"running {name}")
            case ToolProgress(id=call_id, name=name, text=text):  # a running call's output
                (await self._tool(call_id, name)).set_progress(text)
            case ToolFinished(id=call_id, name=name, output=output, is_error=is_error):
                (await self._tool(call_id, name)).set_result(output, is_error)
            case AssistantMessage(message=message, usage=usage):
                await self._complete(message, usage, estimated=event.estimated)
            case UsageSpent(usage=usage):  # a summary request: it costs, it fills nothing
                self.status.set(cost_usd=add_cost(self.status.status.cost_usd, self.cost_of(usage)))
            case Compacted(strategy=kind, tokens_before=before, tokens_after=after, affected=n):
                summary = self.summary() if kind == "full" else ""
                separator = Separator(kind, before, after, n, event.detail, summary=summary)
                await self.conversation.add(separator)
                if after is not None:
                    self.status.set(context_tokens=after, context_estimated=True)
            case CompactFailed(reason=reason):
                await self._notice(
                    f"Compaction failed: {reason}. The history is unchanged.", "error"
                )
            case CompactWarning(pressure=pressure, threshold=threshold):
                await self._notice(
                    f"Context is {pressure:.0%} full: an automatic Full compact (summary of older "
                    f"history) runs at {threshold:.0%}. /compact [focus] does it now.",
                    "warning",
                )
            case Notice(text=text, level=level):
                await self._notice(text, level)
            case TurnEnded():
                await self._finish_text()  # how it ended is said once the stream is closed
        self.conversation.note_output()

    async def _thinking(self, text: str) -> None:
        if self.thinking is None:
            self.thinking = FoldedText("Thinking", classes="-thinking")
            await self._mount(self.thinking)
        self.thinking.add(text)

    async def _text(self, text: str) -> None:
        if self.assistant is None:
            self.assistant = AssistantView()
            await self._mount(self.assistant)
            self.status.busy("writing")
        await self.assistant.write(text)

    async def _tool(
        self, call_id: str, name: str, *, mount_in_attempt: bool = False
    ) -> ToolCallView:
        view = self.tools.get(call_id)
        if view is None:
            if name == "Agent":  # a SubAgent: its card, paired to the child by this call's id
                view = AgentCard(call_id, look=self.look)
            else:
                view = ToolCallView(call_id, name, look=self.look)
            self.tools[call_id] = view
            if mount_in_attempt:
                await self._mount(view)
            else:
                await self.conversation.add(view)
        return view

    async def _discard_attempt(self) -> None:
        """A retry restarts the reply: drop what the failed attempt showed."""
        for widget in self.attempt:
            await widget.remove()
        self.tools = {k: v for k, v in self.tools.items() if v not in self.attempt}
        self.assistant, self.thinking, self.attempt = None, None, []

    async def _ask(self, event: PermissionRequested) -> None:
        await self._finish_text()
        if event.asking is not None and self.on_question is not None:
            await self.on_question(event)
            self.status.busy("waiting for your answer")
            return
        for view in self.tools.values():
            if view.name_ == event.tool and view.tool_input is None:
                view.set_input(event.input)
                break
        asked = self.tools.get(event.tool_use_id or "")
        if asked is not None:
            asked.collapsed = True  # its diff is the approval's, shown once; open when it runs
        prompt = make_prompt(event, self.look.workspace)
        self.prompts.append(prompt)
        await self.approvals.ask(prompt)
        self.on_ask(prompt)
        self.status.busy("waiting for your answer")

    async def _complete(self, message: Message, usage: Usage, *, estimated: bool = False) -> None:
        if self.assistant is not None:
            await self.assistant.finish_with(message.text)
        elif message.text.strip():
            await self.conversation.add(AssistantView(message.text))
        for use in message.tool_uses:
            if use.id in self.tools:
                self.tools[use.id].set_input(dict(use.input))
        self.assistant = None
        self.status.set(
            context_tokens=usage.prompt_tokens + usage.output_tokens,
            context_estimated=estimated,  # the provider reported no usage: Peri counted
            cache_share=usage.cache_read_share if usage.prompt_tokens else None,
            cost_usd=add_cost(self.status.status.cost_usd, self.cost_of(usage)),
        )
