"""One round of tool use: the calls of one assistant message are decided one by one (unknown
tool, bad input, write ownership, PreToolUse hooks, rules, mode, the user's answer), then the
allowed ones run: concurrently, except that calls writing the same resource run in order and a
call whose writes cannot be known runs alone. Each call's result, or why it did not run, becomes
a tool result for the model; the loop (`agent/loop.py`) commits them with the message."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from peri_cli.agent.interruption import TurnProgress, describe_call
from peri_cli.agent.liveoutput import LiveOutput
from peri_cli.agent.precheck import fails_early
from peri_cli.agent.roundresults import clean_content, finished_event
from peri_cli.base.events import (
    Event,
    Notice,
    PermissionAnswer,
    PermissionRequested,
    ToolCall,
)
from peri_cli.base.messages import TextPart, ToolResultPart, ToolUsePart
from peri_cli.base.provider import RAW_INPUT_KEY
from peri_cli.base.questions import NOT_FROM_SUBAGENTS, Asking, AsksUser
from peri_cli.base.tool import (
    NOTHING,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
    ToolRegistry,
    Writes,
)
from peri_cli.extensions.extra_tools import Unwrapping
from peri_cli.extensions.hookanswers import NOT_RUN_STOPPED, HookOutcome
from peri_cli.extensions.hookpoints import Hooks, notices
from peri_cli.extensions.hooks import JudgedCall
from peri_cli.permissions.call_facts import Call
from peri_cli.permissions.call_facts import describe_call as judged_call
from peri_cli.permissions.policy import Decision, PermissionPolicy


@dataclass(frozen=True)
class Denial:
    """A call the permission step refused (headless reports them)."""

    tool_name: str
    tool_use_id: str
    tool_input: dict[str, Any]
    reason: str


@dataclass
class _Planned:
    use: ToolUsePart
    tool: Tool | None = None  # what runs: the named tool, or the target of a wrapper call
    params: Any = None
    writes: Writes = NOTHING
    call: Call | None = None  # the call as the permission policy judged it
    output: ToolOutput | None = None  # set when decided without running (error, denial)
    started: bool = False
    notes: list[str] = field(default_factory=list)  # hooks' messages for the user


@dataclass
class ToolRound:
    """What deciding and running calls needs from the agent that made them."""

    tools: ToolRegistry
    policy: PermissionPolicy
    tool_ctx: ToolContext
    hooks: Hooks | None
    label: str | None  # a SubAgent's name, shown on its permission requests
    live: LiveOutput
    denials: list[Denial]
    ended: bool = False  # an answer ended the turn after this round (a headless plan)
    stop_reason: str | None = None  # a hook's `"continue": false`: the turn ends after this round
    # Milliseconds each call that ran took, by tool_use id; the loop keeps them with the results
    # (the working state reports a command's duration). A refused call has none.
    durations: dict[str, int] = field(default_factory=dict)

    async def run(
        self,
        uses: list[ToolUsePart],
        results: list[ToolResultPart],
        progress: TurnProgress,
        bad_inputs: dict[str, str],
    ) -> AsyncIterator[Event]:
        """Ask permissions one by one, then run the allowed calls: concurrently, except that a
        call waits for every earlier call that writes what it writes."""
        if not uses:
            return
        planned = [_Planned(use) for use in uses]
        for item in planned:
            if self.stop_reason is not None:  # a hook ended the turn before this call
                item.output = ToolOutput.error(NOT_RUN_STOPPED)
                continue
            async for event in self._permit(item, bad_inputs.get(item.use.id)):
                yield event
        for item in planned:
            if item.output is not None:  # refused before running: unknown tool, bad input, denied
                yield finished_event(item.use, item.output)
        runnable = [p for p in planned if p.output is None]
        for item in runnable:
            yield ToolCall(item.use.id, item.use.name, item.use.input)
        # aclosing: a consumer that stops early still stops the running tools right away.
        async with contextlib.aclosing(self._execute(runnable, progress)) as running:
            async for event in running:
                yield event
        for item in planned:
            output = item.output or ToolOutput.error("the tool produced no result")
            results.append(
                ToolResultPart(
                    tool_use_id=item.use.id,
                    content=clean_content(output.content),
                    is_error=output.is_error,
                )
            )

    async def _execute(
        self, runnable: list[_Planned], progress: TurnProgress
    ) -> AsyncGenerator[Event]:
        """Run the permitted calls, each after the earlier ones that write what it writes,
        reporting live progress and each call as it finishes; a cancellation stops them all and
        records in `progress` what was running and what never started."""
        tasks: dict[asyncio.Future[None], _Planned] = {}
        for item in runnable:
            before = [t for t, p in tasks.items() if p.writes.conflicts(item.writes)]
            tasks[asyncio.ensure_future(self._call_after(item, before))] = item
        pending = set(tasks)
        try:
            while pending:
                waker: asyncio.Future[Any] = asyncio.ensure_future(self.live.changed.wait())
                try:
                    woken, _ = await asyncio.wait(
                        {*pending, waker}, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    waker.cancel()
                done = {t for t in pending if t in woken}
                pending -= done
                for report in self.live.take():
                    yield report
                for task in done:
                    item = tasks[task]
                    progress.finished.append(describe_call(item.use.name, item.use.input))
                    yield finished_event(item.use, item.output)
                    for line in item.notes:
                        yield Notice(line, "warning")
        finally:  # cancelled: stop every running tool before the cancellation goes on
            for task in pending:
                item = tasks[task]
                where = progress.running if item.started else progress.not_started
                where.append(describe_call(item.use.name, item.use.input))
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    def _refusal(self, item: _Planned, bad_input: str | None) -> ToolOutput | None:
        """Why a call cannot even be considered: an unknown tool or unusable arguments."""
        tool = self.tools.get(item.use.name)
        if tool is None:
            names = ", ".join(sorted(self.tools.direct))
            more = " More are available through SearchExtraTools." if self.tools.deferred else ""
            return ToolOutput.error(
                f"Unknown tool {item.use.name!r}. Available tools: {names}.{more}"
            )
        if RAW_INPUT_KEY in item.use.input and len(item.use.input) == 1:
            return ToolOutput.error(
                f"The arguments for {tool.name} were not valid JSON. Send a JSON object "
                "matching the tool's input schema."
            )
        if bad_input is not None:
            return ToolOutput.error(
                f"The input for {tool.name} held invalid text (a lone UTF-16 surrogate) in "
                f"{bad_input}; the call was not run. Send the arguments again as valid Unicode."
            )
        return None

    async def _permit(self, item: _Planned, bad_input: str | None) -> AsyncIterator[Event]:
        """Decide one call: its real target, its input, its writes, hooks, rules and the mode;
        ask the user when that is the answer."""
        item.output = self._refusal(item, bad_input)
        tool = self.tools.get(item.use.name)
        if item.output is not None or tool is None:
            return
        raw = item.use.input
        try:
            if isinstance(tool, Unwrapping):  # permissions are decided on the target
                tool, raw = await tool.unwrap(raw)
            item.tool = tool
            item.params = tool.validate(raw)
            item.writes = tool.writes(item.params, self.tool_ctx)
            held = self.tool_ctx.owners.conflict(self.tool_ctx.agent_id, item.writes.paths)
            if held is not None:
                raise ToolError(held)
            call = item.call = judged_call(tool, item.params, raw, self.tool_ctx, item.writes)
            pre = await self._pre_tool_use(call, raw, item.use.id)
            for notice in notices(pre):
                yield notice
            if pre.stop_reason is not None:
                self.stop_reason = pre.stop_reason
                raise ToolError(f"Not run: a PreToolUse hook ended the turn: {pre.stop_reason}")
            if pre.blocked:
                raise ToolError(f"Blocked by a PreToolUse hook: {pre.reason}")
            if pre.updated_input is not None:  # a hook changed the input: that is judged and runs
                raw = self._replace_input(item, tool, pre.updated_input, strict=True)
                call = item.call = judged_call(tool, item.params, raw, self.tool_ctx, item.writes)
            decision = self.policy.decide(
                call,
                hook=pre.permission,
                hook_reason=pre.permission_reason,
                agent=self.tool_ctx.agent_id,
            )
            asking = tool.asking(item.params) if isinstance(tool, AsksUser) else None
            if asking is not None and self.tool_ctx.agent_id is not None:
                raise ToolError(NOT_FROM_SUBAGENTS)
            if decision.action == "ask" and (
                early := await fails_early(tool, item.params, call, self.policy, self.tool_ctx)
            ):
                raise ToolError(early)  # e.g. an Edit whose old_string is not in the file
        except ToolError as e:
            item.output = ToolOutput.error(str(e))
            return
        except Exception as e:  # a path with a NUL byte, a broken tool: the call fails, not Peri
            item.output = ToolOutput.error(
                f"Could not check {tool.name} before running it ({type(e).__name__}: {e}); "
                "the call was not run. Fix the arguments and retry."
            )
            return
        if asking is not None and decision.action != "deny":  # a question: asked in any mode
            decision = Decision("ask", "asks the user")
        async for event in self._answer(item, tool, call, decision, asking):
            yield event

    async def _answer(
        self, item: _Planned, tool: Tool, call: Call, decision: Decision, asking: Asking | None
    ) -> AsyncIterator[Event]:
        """Apply a decision, asking the user when it says "ask"; a denial becomes the result
        (a question's refusal: its note is the model's whole message)."""
        raw = dict(call.tool_input)  # the target's own input (a wrapper call unwrapped)
        answer: PermissionAnswer = "allow" if decision.action == "allow" else "deny"
        note = ""
        if decision.action == "ask":
            offers = (
                []
                if decision.outside_workspace or decision.protected or asking
                else self.policy.suggestions(call)
            )
            future: asyncio.Future[PermissionAnswer] = asyncio.get_running_loop().create_future()
            asked = PermissionRequested(
                tool.name, raw, decision.reason, future, agent=self.label, suggestions=offers
            )
            asked.tool_use_id, asked.asking = item.use.id, asking
            yield asked
            answer = await future
            note = asked.deny_note.strip()
            self.ended = self.ended or asked.ends_turn
            if answer != "deny" and asked.updated_input is not None:
                self._replace_input(item, tool, asked.updated_input)
            if answer == "allow_session":
                self.policy.allow_for_session(offers)
            elif answer == "allow_project" and (problem := self.policy.allow_in_project(offers)):
                yield Notice(problem, "warning")
        if answer != "deny":
            self.tool_ctx.owners.claim(self.tool_ctx.agent_id, self.label or "", item.writes.paths)
            return
        if asking is not None:
            item.output = ToolOutput.error(note or f"The user dismissed {tool.name}.")
            return
        why = decision.reason or "not permitted"
        self.denials.append(Denial(tool.name, item.use.id, dict(raw), note or why))
        if note:  # the user said why, and maybe what to do instead
            item.output = ToolOutput.error(
                f"The user denied {tool.name} and said: {note}\nDo not retry the same call."
            )
            return
        item.output = ToolOutput.error(
            f"Permission denied for {tool.name} ({why}) in permission mode "
            f"{self.policy.mode!r}. Do not retry the same call; tell the user what you "
            "wanted to do so they can allow it or change the mode."
        )

    def _replace_input(
        self, item: _Planned, tool: Tool, raw: dict[str, Any], *, strict: bool = False
    ) -> dict[str, Any]:
        """The answer changed the input (a program's `Allow(updated_input=...)`, a hook's
        `updatedInput`): that runs. `strict`: an invalid one raises ToolError."""
        try:
            item.params = tool.validate(raw)
            item.writes = tool.writes(item.params, self.tool_ctx)
        except Exception as e:
            message = f"The changed input for {tool.name} is invalid: {e}"
            if strict:
                raise ToolError(message) from e
            item.output = ToolOutput.error(message)
            return raw
        item.use = item.use.model_copy(update={"input": raw})
        return raw

    async def _pre_tool_use(self, call: Call, raw: dict[str, Any], use_id: str) -> HookOutcome:
        if self.hooks is None:
            return HookOutcome()
        return await self.hooks.run(
            "PreToolUse",
            judged=JudgedCall(call, self.policy.context()),
            tool_name=call.tool,
            tool_input=dict(raw),
            tool_use_id=use_id,
        )

    async def _call_after(self, item: _Planned, before: list[asyncio.Future[None]]) -> None:
        """Run one call once the earlier calls that write what it writes have finished."""
        if before:
            await asyncio.wait(before)
        item.started = True
        tool = item.tool
        assert tool is not None
        ctx = dataclasses.replace(
            self.tool_ctx, call_id=item.use.id, progress=self.live.reporter(item.use)
        )
        if item.call is not None and ctx.read_denied is not None:  # what the user let it read
            ctx = dataclasses.replace(ctx, read_denied=self.policy.read_filter(item.call))
        paths = item.writes.paths
        moved = self._moved_since_approval(item) if paths else None
        if moved is not None:
            item.output = ToolOutput.error(moved)
            return
        if paths:
            await self._checkpoint("before", paths, item.use.id)
        started = time.monotonic()
        try:
            item.output = await tool.call(item.params, ctx)
        except ToolError as e:
            item.output = ToolOutput.error(str(e))
        except Exception as e:  # a tool bug must reach the model as an error, not end the session
            item.output = ToolOutput.error(f"{tool.name} failed: {type(e).__name__}: {e}")
        self.durations[item.use.id] = round((time.monotonic() - started) * 1000)
        if paths:
            await self._checkpoint("after", paths, item.use.id)
        if self.hooks is not None and self.hooks.has("PostToolUse"):
            item.output = await self._post_tool_use(item, item.output)

    def _moved_since_approval(self, item: _Planned) -> str | None:
        """Why a call may not write what was approved: a path that resolves elsewhere now (an
        earlier call of the round made a symlink on its way, e.g. `ln -s ~/.bashrc x`)."""
        assert item.tool is not None
        try:
            now = item.tool.writes(item.params, self.tool_ctx).paths
        except Exception as e:
            return f"{item.tool.name} was not run: its target could not be checked again ({e})."
        if now == item.writes.paths:
            return None
        shown = ", ".join(str(p) for p in now)
        return (
            f"{item.tool.name} was not run: its target now resolves to {shown}, not what was "
            "checked and approved (a symlink changed on its way since). Check the path and "
            "ask again."
        )

    async def _checkpoint(
        self, phase: Literal["before", "after"], paths: tuple[Path, ...], call_id: str
    ) -> None:
        """Keep the files a call writes before it runs, and record what it left (/rewind)."""
        keeper = self.tool_ctx.checkpoints
        if keeper is None:
            return
        look = keeper.keep if phase == "before" else keeper.look
        states = await asyncio.to_thread(look, paths)
        with contextlib.suppress(OSError):  # a full disk fails the turn where it commits
            keeper.record(phase, states, call_id=call_id, agent=self.label)

    async def _post_tool_use(self, item: _Planned, output: ToolOutput) -> ToolOutput:
        """A PostToolUse hook's reason and context go to the model beside the result."""
        assert self.hooks is not None and item.tool is not None
        text = "".join(p.text for p in output.content if isinstance(p, TextPart))
        judged = JudgedCall(item.call, self.policy.context()) if item.call is not None else None
        outcome = await self.hooks.run(
            "PostToolUse",
            judged=judged,
            tool_name=item.tool.name,
            tool_input=dict(item.use.input),
            tool_use_id=item.use.id,
            tool_response={"output": text, "is_error": output.is_error},
        )
        item.notes.extend(n.text for n in notices(outcome))
        if outcome.stop_reason is not None and self.stop_reason is None:
            self.stop_reason = outcome.stop_reason  # the result stands; no model call follows
        extra = [f"[PostToolUse hook: {outcome.reason}]"] if outcome.blocked else []
        extra += [f"[PostToolUse hook context: {c}]" for c in outcome.context]
        if not extra:
            return output
        return ToolOutput([*output.content, TextPart(text="\n".join(extra))], output.is_error)
