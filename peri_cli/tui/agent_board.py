"""What the TUI knows about the SubAgents of the attached session, for their cards, the agent
strip and their panes: each child's state, latest tool call, time and tokens, its tool calls as a
list, and its events as a log a pane replays when it opens (streamed text merged, so the log
grows with the child's blocks, not its tokens). Fed by the manager's events (live children) or
by the children's transcripts (a resumed session). Imported with the core, not at start-up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from peri_cli.agent.subagents import Child, ChildEvent, ChildStateChanged
from peri_cli.base.events import (
    AssistantMessage,
    Event,
    PermissionRequested,
    ToolCall,
    ToolFinished,
)
from peri_cli.base.provider import TextDelta, ThinkingDelta
from peri_cli.tui.tool_text import NO_LOOK, State, ToolLook, summarize_input

if TYPE_CHECKING:
    from peri_cli.session.children import ChildRecord
    from peri_cli.session.transcript import Entry

RUNNING = frozenset({"queued", "running"})
LogItem = Event | ChildStateChanged


@dataclass
class _Run:
    """Consecutive streamed fragments of one kind, kept as a list (joined when replayed)."""

    thinking: bool
    parts: list[str]

    def event(self) -> LogItem:
        text = "".join(self.parts)
        return ThinkingDelta(text) if self.thinking else TextDelta(text)


@dataclass
class ToolLine:
    """One tool call of a child, as its card's tree shows it."""

    id: str
    name: str
    summary: str = ""  # the main argument, one line
    state: State = "running"
    output: str | None = None


@dataclass
class ChildInfo:
    id: str
    type: str
    description: str
    tool_use_id: str
    background: bool = False
    model: str = ""
    task: str = ""  # the prompt it was given (a live child's; a resumed one's is in its record)
    state: str = "queued"
    detail: str = ""
    started: float | None = None  # app clock seconds (wall time)
    ended: float | None = None
    tokens: int = 0  # the last request's window use: prompt + output
    last_tool: str = ""  # "Grep: X =", "Read a.py"
    tools: dict[str, ToolLine] = field(default_factory=dict)
    log: list[LogItem | _Run] = field(default_factory=list)
    report: str = ""
    cost: float | None = 0.0  # of every reply it received (a resumed child's, from its transcript)
    live: bool = True  # False: read back from a transcript (nothing runs behind it)
    path: Path | None = None  # its transcript, for a resumed child
    prompts: list[Any] = field(default_factory=list)  # its approvals still on screen

    @property
    def label(self) -> str:
        return f"{self.type}: {self.description}" if self.description else self.type

    @property
    def running(self) -> bool:
        return self.state in RUNNING

    def elapsed(self, now: float) -> float | None:
        if self.started is None:
            return None
        return max(0.0, (self.ended if self.ended is not None else now) - self.started)


class CardView(Protocol):
    """What the board asks of a child's card (widgets/agent_card.AgentCard)."""

    call_id: str

    def show_child(self, info: ChildInfo | None) -> None: ...


Listener = Callable[[ChildEvent], None]


class AgentBoard:
    """The SubAgents of one session, by id and by the `tool_use` id of their Agent call."""

    def __init__(self, clock: Callable[[], float], look: ToolLook = NO_LOOK) -> None:
        self.clock = clock
        self.look = look
        self.children: dict[str, ChildInfo] = {}
        self.cards: dict[str, CardView] = {}  # by tool_use id
        self._listeners: dict[str, list[Listener]] = {}
        self._dirty: set[str] = set()

    # --- lookups ---------------------------------------------------------------------------

    def by_tool_use(self, tool_use_id: str) -> ChildInfo | None:
        for info in self.children.values():
            if info.tool_use_id == tool_use_id:
                return info
        return None

    def find(self, prefix: str) -> list[ChildInfo]:
        prefix = prefix.strip()
        return [c for i, c in self.children.items() if prefix and i.startswith(prefix)]

    def running(self) -> list[ChildInfo]:
        return [c for c in self.children.values() if c.running and c.live]

    # --- cards ------------------------------------------------------------------------------

    def attach(self, card: CardView) -> None:
        self.cards[card.call_id] = card
        card.show_child(self.by_tool_use(card.call_id))

    def detach(self, card: CardView) -> None:
        if self.cards.get(card.call_id) is card:
            del self.cards[card.call_id]

    def flush(self) -> list[ChildInfo]:
        """Redraw the cards of the children that changed since the last flush; returns them."""
        changed = [self.children[i] for i in self._dirty if i in self.children]
        self._dirty.clear()
        for info in changed:
            card = self.cards.get(info.tool_use_id)
            if card is not None:
                card.show_child(info)
        return changed

    def refresh_running(self) -> None:
        """Their elapsed time moved on."""
        self._dirty.update(c.id for c in self.running())

    # --- panes ------------------------------------------------------------------------------

    def subscribe(self, child_id: str, listener: Listener) -> list[LogItem]:
        """What the child did so far, and from now on each new event to `listener`."""
        self._listeners.setdefault(child_id, []).append(listener)
        info = self.children.get(child_id)
        return [x.event() if isinstance(x, _Run) else x for x in info.log] if info else []

    def unsubscribe(self, child_id: str, listener: Listener) -> None:
        listeners = self._listeners.get(child_id, [])
        if listener in listeners:
            listeners.remove(listener)

    # --- live events ------------------------------------------------------------------------

    def apply(self, item: ChildEvent, child: Child | None, model: str = "") -> ChildInfo | None:
        """Record one event of a live child (`child`: the manager's record of it)."""
        info = self.children.get(item.child_id)
        if info is None:
            if child is None:
                return None
            info = self.children[item.child_id] = ChildInfo(
                id=child.id,
                type=child.type.name,
                description=child.description,
                tool_use_id=child.tool_use_id,
                background=child.background,
                model=child.type.model or model,
                task=child.prompt,
            )
        event = item.event
        if isinstance(event, TextDelta | ThinkingDelta):  # most events: into the log only
            _append_text(info.log, event)
        else:
            self._dirty.add(info.id)  # what a card or the strip shows may have changed
            self._record(info, event)
            if not isinstance(event, PermissionRequested):  # (answered in the dock, not replayed)
                info.log.append(event)
        for listener in list(self._listeners.get(info.id, ())):
            listener(item)
        return info

    def _record(self, info: ChildInfo, event: LogItem) -> None:
        match event:
            case ChildStateChanged(state=state, detail=detail):
                info.state, info.detail = state, detail
                if state == "running" and info.started is None:
                    info.started = self.clock()
                elif state not in RUNNING:
                    info.ended = self.clock()
                    if info.started is None:
                        info.started = info.ended
            case ToolCall(id=call_id, name=name, input=tool_input):
                summary = summarize_input(name, tool_input, self.look)
                info.tools[call_id] = ToolLine(call_id, name, summary)
                info.last_tool = f"{name}: {summary}" if summary else name
            case ToolFinished(id=call_id, name=name, output=output, is_error=is_error):
                line = info.tools.setdefault(call_id, ToolLine(call_id, name))
                line.state, line.output = ("error" if is_error else "done"), output
            case AssistantMessage(message=message, usage=usage):
                info.tokens = usage.prompt_tokens + usage.output_tokens
                if message.text.strip():
                    info.report = message.text
            case _:
                pass
        if not info.running:
            for line in info.tools.values():
                if line.state == "running":
                    line.state = "cancelled"

    # --- resumed children ---------------------------------------------------------------------

    def add_records(self, infos: Iterable[ChildInfo]) -> list[ChildInfo]:
        """Children read back from their transcripts; a live record of the same id wins.
        Returns the ones added."""
        added = []
        for info in infos:
            if info.id not in self.children:
                self.children[info.id] = info
                self._dirty.add(info.id)
                added.append(info)
        return added


def _append_text(log: list[LogItem | _Run], event: TextDelta | ThinkingDelta) -> None:
    """Consecutive text (or thinking) fragments become one run: the log grows with the
    child's blocks, not its tokens."""
    thinking = isinstance(event, ThinkingDelta)
    last = log[-1] if log else None
    if isinstance(last, _Run) and last.thinking == thinking:
        last.parts.append(event.text)
    else:
        log.append(_Run(thinking, [event.text]))


# --- reading a resumed session's children --------------------------------------------------


def _epoch(ts: str) -> float | None:
    try:
        return datetime.fromisoformat(ts).timestamp()
    except ValueError:
        return None


def info_from_record(
    record: ChildRecord, entries: list[Entry], look: ToolLook, model: str = ""
) -> ChildInfo:
    """A child as its transcript tells it: state, tool calls, time, tokens, cost, report."""
    from peri_cli.base.models import cost_usd
    from peri_cli.session.transcript import AgentStatus, MessageEntry
    from peri_cli.tui.items import ToolItem, display_items

    info = ChildInfo(
        id=record.id,
        type=record.ref.type,
        description=record.ref.description,
        tool_use_id=record.ref.tool_use_id,
        background=record.ref.background,
        state=record.state,
        detail=record.detail,
        live=False,
        path=record.path,
    )
    times = [t for e in entries if isinstance(e, AgentStatus) and (t := _epoch(e.ts)) is not None]
    messages = [e for e in entries if isinstance(e, MessageEntry)]
    if times:
        info.started = times[0]
        last = _epoch(messages[-1].ts) if messages else None
        info.ended = max(times[-1], last or times[-1])
    for item in display_items(entries):
        if isinstance(item, ToolItem):
            summary = summarize_input(item.name, item.input, look)
            state: State = "cancelled" if item.output is None else "done"
            if item.is_error:
                state = "error"
            info.tools[item.id] = ToolLine(item.id, item.name, summary, state, item.output)
            info.last_tool = f"{item.name}: {summary}" if summary else item.name
    for entry in messages:
        if entry.usage is not None:
            more = cost_usd(entry.model or model, entry.usage)
            info.cost = None if info.cost is None or more is None else info.cost + more
    for entry in reversed(messages):
        if entry.message.role == "assistant" and entry.usage is not None:
            info.tokens = entry.usage.prompt_tokens + entry.usage.output_tokens
            info.model = entry.model or model
            break
    for entry in reversed(messages):
        if entry.message.role == "assistant" and entry.message.text.strip():
            info.report = entry.message.text
            break
    return info


def read_children(session_dir: Path, look: ToolLook, model: str = "") -> list[ChildInfo]:
    """Every child recorded under a session folder (run in a thread: it reads files)."""
    from peri_cli.session.children import list_children
    from peri_cli.session.transcript_file import TranscriptError, load

    infos: list[ChildInfo] = []
    for record in list_children(session_dir):
        try:
            entries = load(record.path).entries
        except (TranscriptError, OSError):
            entries = []
        infos.append(info_from_record(record, list(entries), look, model))
    return infos


async def read_children_async(
    session_dir: Path, look: ToolLook, model: str = ""
) -> list[ChildInfo]:
    return await asyncio.to_thread(read_children, session_dir, look, model)
