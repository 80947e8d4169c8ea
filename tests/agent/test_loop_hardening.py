"""Issue 9 and 10 hardening of the loop: write ordering, blank text, bad Unicode, exceptions while
deciding, interruption notes and missing usage; the scripted provider and real tools throughout."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from peri_cli.agent.loop import Agent
from peri_cli.base.events import AssistantMessage, ToolCall, ToolFinished
from peri_cli.base.messages import Message, TextPart, ToolUsePart
from peri_cli.base.provider import MessageCompleted, ModelRequest, ProviderError, StreamEvent
from peri_cli.base.tool import ANYTHING, NOTHING, PydanticTool, ToolContext, ToolOutput, Writes
from peri_cli.context.projection import project
from peri_cli.context.viewrules import validate_view
from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.session.transcript import Interruption, MessageEntry
from peri_cli.session.transcript_file import load
from tests.agent.test_loop import drive, make_agent, messages_on_disk


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


# --- item 1: calls that write the same thing run in order ------------------------------------


async def test_item1_parallel_edits_to_one_file_all_land(workspace: Path) -> None:
    lines = [f"line {i} = {i}\n" for i in range(5)]
    (workspace / "f.py").write_text("".join(lines))
    edits = [
        ScriptedCall(
            "Edit",
            {"file_path": "f.py", "old_string": f"line {i} = {i}", "new_string": f"line {i} = X"},
        )
        for i in range(5)
    ]
    agent, _ = make_agent(
        workspace,
        [ScriptedReply(tool_calls=edits), ScriptedReply(text="done")],
        mode="accept-edits",
    )
    events = await drive(agent, "edit")
    results = [e for e in events if isinstance(e, ToolFinished)]
    assert len(results) == 5 and not any(r.is_error for r in results)
    assert (workspace / "f.py").read_text() == "".join(f"line {i} = X\n" for i in range(5))


class _ProbeParams(BaseModel):
    label: str
    writes: list[str] = []
    anything: bool = False


class _Probe(PydanticTool[_ProbeParams]):
    """A test tool that records which calls overlap in time."""

    name = "Probe"
    kind = "write"
    params = _ProbeParams

    def __init__(self) -> None:
        self.active: set[str] = set()
        self.overlaps: set[frozenset[str]] = set()

    def description(self) -> str:
        return "probe"

    def writes(self, params: _ProbeParams, ctx: ToolContext) -> Writes:
        if params.anything:
            return ANYTHING
        if not params.writes:
            return NOTHING
        return Writes(tuple(ctx.workspace / w for w in params.writes))

    async def call(self, params: _ProbeParams, ctx: ToolContext) -> ToolOutput:
        for other in self.active:
            self.overlaps.add(frozenset((other, params.label)))
        self.active.add(params.label)
        await asyncio.sleep(0.05)
        self.active.discard(params.label)
        return ToolOutput.text(params.label)


async def test_item1_writers_of_one_resource_never_overlap_readers_do(workspace: Path) -> None:
    calls = [
        ScriptedCall("Probe", {"label": "shell", "anything": True}),
        ScriptedCall("Probe", {"label": "r1"}),
        ScriptedCall("Probe", {"label": "w1", "writes": ["a"]}),
        ScriptedCall("Probe", {"label": "w2", "writes": ["a"]}),
        ScriptedCall("Probe", {"label": "other", "writes": ["b"]}),
        ScriptedCall("Probe", {"label": "r2"}),
    ]
    agent, _ = make_agent(
        workspace, [ScriptedReply(tool_calls=calls), ScriptedReply(text="ok")], mode="bypass"
    )
    probe = _Probe()
    agent.tools.add(probe)
    await drive(agent, "go")
    pair = frozenset
    assert pair(("w1", "w2")) not in probe.overlaps  # same file: in order
    assert pair(("w1", "other")) in probe.overlaps  # different files: together
    assert pair(("r1", "r2")) in probe.overlaps  # readers: together
    assert pair(("r1", "shell")) in probe.overlaps  # a reader beside an unknown writer
    for writer in ("w1", "w2", "other"):  # an unknown writer beside no other writer
        assert pair((writer, "shell")) not in probe.overlaps


# --- item 2: blank text never reaches a request ----------------------------------------------


async def test_item2_a_whitespace_reply_block_is_kept_but_never_sent(workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    replies = [
        ScriptedReply(text="\n\n", tool_calls=[ScriptedCall("Read", {"file_path": "a.txt"})]),
        ScriptedReply(text="  "),  # a reply of nothing but whitespace
        ScriptedReply(text="fine"),
    ]
    agent, provider = make_agent(workspace, replies)
    await drive(agent, "read it")
    await drive(agent, "and now?")
    # the record keeps the blocks as they came
    assert any(m.text == "\n\n" for m in messages_on_disk(agent))
    for request in provider.requests:
        assert not validate_view(request.messages), request.messages
        for m in request.messages:
            assert all(p.text.strip() for p in m.content if isinstance(p, TextPart))
    # the blank reply was left out; the two user prompts around it merged
    last = provider.requests[-1].messages
    assert [m.role for m in last][-1] == "user" and "and now?" in last[-1].text


async def test_item2_a_blank_prompt_adds_no_message(workspace: Path) -> None:
    agent, _ = make_agent(workspace, [ScriptedReply(text="hi")])
    await drive(agent, "hello")
    before = len(messages_on_disk(agent))
    assert not agent.can_continue()  # the last turn finished: nothing to keep going with
    async for _ in agent.run("   \n"):
        pass
    assert len(messages_on_disk(agent)) == before + 1  # only the new reply, no blank prompt


# --- item 8: lone surrogates are replaced, and a call that held one does not run --------------


async def test_item8_lone_surrogates_in_replies_and_tool_input(workspace: Path) -> None:
    replies = [
        ScriptedReply(
            text="broken \ud800 text",
            tool_calls=[ScriptedCall("Write", {"file_path": "x.txt", "content": "a\udc00b"})],
        ),
        ScriptedReply(text="ok"),
    ]
    agent, _ = make_agent(workspace, replies, mode="accept-edits")
    events = await drive(agent, "prompt \udcff from a non-UTF-8 argv")
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert finished[0].is_error and "content" in finished[0].output
    assert "surrogate" in finished[0].output
    assert not (workspace / "x.txt").exists()  # the call did not run on altered input
    loaded = load(agent.session.path)  # the record was written and reads back
    texts = [e.message.text for e in loaded.entries if isinstance(e, MessageEntry)]
    assert "broken \ufffd text" in texts and "prompt \ufffd from a non-UTF-8 argv" in texts
    assert events[-1].reason == "done"


# --- item 9: an exception while deciding a permission is an error result ----------------------


async def test_item9_nul_byte_in_a_path_is_an_error_result(workspace: Path) -> None:
    calls = [ScriptedCall("Write", {"file_path": "a\x00b.txt", "content": "x"})]
    agent, _ = make_agent(workspace, [ScriptedReply(tool_calls=calls), ScriptedReply(text="ok")])
    events = await drive(agent, "write")
    (finished,) = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.is_error and "not run" in finished.output
    assert events[-1].reason == "done"


# --- issue 10: an interrupted turn is recorded and the model is told --------------------------


async def _cancel_after_tool_starts(agent: Agent, prompt: str) -> None:
    started = asyncio.Event()

    async def consume() -> None:
        async for event in agent.run(prompt):
            if isinstance(event, ToolCall) and event.name == "Bash":
                started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 10)
    await asyncio.sleep(0.3)  # let the Edit finish and the Bash start
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)


async def test_cancelled_turn_leaves_a_note_naming_what_ran(workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    calls = [
        ScriptedCall("Edit", {"file_path": "a.py", "old_string": "1", "new_string": "2"}),
        ScriptedCall("Bash", {"command": "sleep 30"}),
    ]
    agent, provider = make_agent(
        workspace, [ScriptedReply(tool_calls=calls), ScriptedReply(text="ok")], mode="bypass"
    )
    await _cancel_after_tool_starts(agent, "sleepy tool")
    note = agent.last_interruption
    assert note is not None and "interrupted" in note
    assert "Edit a.py" in note and "Bash: sleep 30" in note and "not kept" in note
    assert (workspace / "a.py").read_text() == "x = 2\n"
    await drive(agent, "fix the add bug now")
    sent = provider.requests[-1].messages
    assert [m.role for m in sent] == ["user"]
    texts = [p.text for p in sent[0].content if isinstance(p, TextPart)]
    assert texts == ["sleepy tool", note, "fix the add bug now"]
    on_disk = load(agent.session.path).entries
    assert any(isinstance(e, Interruption) and e.reason == "cancelled" for e in on_disk)
    assert project(on_disk)[:-1] == sent  # a resumed session sees the same (plus the reply)


async def test_failed_turn_leaves_a_note(workspace: Path) -> None:
    agent, provider = make_agent(
        workspace, [ScriptedReply(error=ProviderError("overloaded (529)")), ScriptedReply()]
    )
    events = await drive(agent, "first")
    assert events[-1].reason == "error"
    assert agent.last_interruption and "interrupted by an error: overloaded (529)" in (
        agent.last_interruption
    )
    await drive(agent, "second")
    assert agent.last_interruption is None
    assert "interrupted" in provider.requests[-1].messages[0].text


# --- issue 10: usage the provider did not report is counted and marked -----------------------


class _NoUsage:
    """A provider that, like llama.cpp's server, never reports usage."""

    name = "no-usage"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        message = Message(role="assistant", content=[TextPart(text="answer " * 50)])
        none: Any = None
        yield MessageCompleted(message=message, stop_reason="end_turn", usage=none)


async def test_missing_usage_is_estimated_and_marked(workspace: Path) -> None:
    agent, _ = make_agent(workspace, [])
    agent.provider = _NoUsage()
    events = await drive(agent, "question " * 200)
    (reply,) = [e for e in events if isinstance(e, AssistantMessage)]
    # (the shared counter's calibration depends on what ran before: compare with its own count)
    assert reply.estimated and reply.usage.input_tokens > 200
    assert reply.usage.output_tokens == agent.counter.count_message(reply.message) > 0
    assert agent.usage_estimated and agent.usage_total == reply.usage
    (entry,) = [
        e
        for e in load(agent.session.path).entries
        if isinstance(e, MessageEntry) and e.message.role == "assistant"
    ]
    assert entry.usage_estimated and entry.usage == reply.usage


def test_blank_assistant_message_is_dropped_and_neighbours_stay_valid() -> None:
    from peri_cli.context.viewrules import normalize

    use = ToolUsePart(id="t1", name="Read", input={})
    view = normalize(
        [
            Message(role="user", content=[TextPart(text="a")]),
            Message(role="assistant", content=[TextPart(text=" \n")]),
            Message(role="user", content=[TextPart(text="b")]),
            Message(role="assistant", content=[TextPart(text="\n"), use]),
        ]
    )
    assert [m.role for m in view] == ["user"]  # the unanswered tool_use went too
    assert not validate_view(view)


async def test_a_write_whose_path_is_made_a_symlink_by_an_earlier_call_is_not_run(
    workspace: Path, tmp_path: Path
) -> None:
    """Approved for `ws/x`; a Bash call before it in the same message links `x` out of the
    workspace: the Write must not follow the link to what was never approved."""
    target = tmp_path / "bashrc"
    target.write_text("mine\n")
    calls = [
        ScriptedCall("Bash", {"command": f"ln -s {target} x"}),
        ScriptedCall("Write", {"file_path": "x", "content": "pwned\n"}),
    ]
    agent, _ = make_agent(
        workspace, [ScriptedReply(tool_calls=calls), ScriptedReply(text="ok")], mode="bypass"
    )
    events = await drive(agent, "go")
    (write,) = [e for e in events if isinstance(e, ToolFinished) and e.name == "Write"]
    assert write.is_error and "now resolves to" in write.output
    assert target.read_text() == "mine\n"
