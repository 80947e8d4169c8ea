"""Tool calls Peri makes for the user before a prompt is sent (a custom command's `` !`cmd` ``
lines, its `@path`s outside the workspace): decided and run as one tool round, as a call of the
model's would be (PreToolUse hooks, the rules, the mode, the user's answer, the sandbox, the
tool's own output limits), but answered to the caller, not the model: nothing is recorded."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from peri_cli.agent.interruption import TurnProgress
from peri_cli.agent.liveoutput import LiveOutput
from peri_cli.agent.toolround import ToolRound
from peri_cli.base.events import Event, ToolCall, ToolFinished
from peri_cli.base.messages import ImagePart, TextPart, ToolResultPart, ToolUsePart

if TYPE_CHECKING:
    from peri_cli.agent.loop import Agent

COMMAND_CALL_ID = "command_call_"  # how the ids of these calls begin


@dataclass(frozen=True)
class CallOutcome:
    """What became of one call: it ran (`content` is its result) or not (`why`, one line)."""

    ran: bool
    content: tuple[TextPart | ImagePart, ...] = ()
    is_error: bool = False
    why: str = ""

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))


async def run_calls(
    agent: Agent, calls: Sequence[tuple[str, dict[str, Any]]], outcomes: list[CallOutcome]
) -> AsyncIterator[Event]:
    """Decide and run `calls` ((tool name, input) each) in order, yielding what a tool round
    yields (questions for the user included); `outcomes` gets one per call, in order."""
    uses = [
        ToolUsePart(id=f"{COMMAND_CALL_ID}{uuid.uuid4().hex[:12]}", name=name, input=dict(raw))
        for name, raw in calls
    ]
    results: list[ToolResultPart] = []
    denied_before = len(agent.denials)
    tool_round = ToolRound(
        agent.tools,
        agent.policy,
        agent.tool_ctx,
        agent.hooks,
        agent.label,
        LiveOutput(),
        agent.denials,
    )
    announced: set[str] = set()
    inputs = {use.id: use.input for use in uses}
    async for event in tool_round.run(uses, results, TurnProgress(), {}):
        if isinstance(event, ToolCall):
            announced.add(event.id)
        elif isinstance(event, ToolFinished) and event.id not in announced:
            # refused before running: shown as the call it was, then why it did not run
            announced.add(event.id)
            yield ToolCall(event.id, event.name, inputs.get(event.id, {}))
        yield event
    denials = {d.tool_use_id: d.reason for d in agent.denials[denied_before:]}
    by_id = {r.tool_use_id: r for r in results}
    for use in uses:
        result = by_id.get(use.id)
        content = tuple(p for p in (result.content if result else []) if _part(p))
        if result is not None and use.id in tool_round.durations:
            outcomes.append(CallOutcome(True, content, result.is_error))
            continue
        text = "".join(p.text for p in content if isinstance(p, TextPart))
        why = denials.get(use.id)
        why = f"denied: {why}" if why else (text.splitlines() or ["it was not run"])[0]
        outcomes.append(CallOutcome(False, why=why))


def _part(part: object) -> bool:
    return isinstance(part, TextPart | ImagePart)
