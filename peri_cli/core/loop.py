"""The agent loop: Receive -> Compact -> Reason -> ToolUse, yielding typed events."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from peri_cli.core.contributions import ContributionChain, RequestContext
from peri_cli.core.events import (
    AssistantMessage,
    Event,
    Notice,
    PermissionAnswer,
    PermissionRequested,
    ToolCall,
    ToolFinished,
    ToolProgress,
    TurnEnded,
    TurnStarted,
    UsageSpent,
)
from peri_cli.core.extra_tools import Unwrapping
from peri_cli.core.hookpoints import Hooks, notices
from peri_cli.core.hooks import HookOutcome
from peri_cli.core.interruption import TurnProgress, describe_call, interruption_note
from peri_cli.core.messages import (
    Message,
    TextPart,
    ToolResultPart,
    ToolUsePart,
    Usage,
    scrub_message,
    user_text,
)
from peri_cli.core.policy import Decision, PermissionPolicy
from peri_cli.core.projection import cache_marks, project
from peri_cli.core.provider import (
    RAW_INPUT_KEY,
    MessageCompleted,
    ModelRequest,
    Provider,
    ProviderError,
)
from peri_cli.core.retry import stream_with_retries
from peri_cli.core.session import Session
from peri_cli.core.textsafe import scrub_surrogates
from peri_cli.core.tokens import TokenCounter, default_counter
from peri_cli.core.tools import (
    NOTHING,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
    ToolRegistry,
    Writes,
)
from peri_cli.core.transcript import Interruption, MessageEntry

if TYPE_CHECKING:
    from peri_cli.core.compaction import CompactionContext


class LiveOutput:
    """Running tools' progress reports, the latest per call, and a wake-up for the loop that
    yields them; reports between two looks collapse into one (the UI throttles no further)."""

    def __init__(self) -> None:
        self.latest: dict[str, ToolProgress] = {}
        self.changed = asyncio.Event()

    def reporter(self, use: ToolUsePart) -> Callable[[str], None]:
        def report(text: str) -> None:
            self.latest[use.id] = ToolProgress(use.id, use.name, scrub_surrogates(text))
            self.changed.set()

        return report

    def take(self) -> list[ToolProgress]:
        reports = list(self.latest.values())
        self.latest.clear()
        self.changed.clear()
        return reports


class CompactHook(Protocol):
    """Runs in the Compact phase before every model call (the compaction module fills it)."""

    def before_request(self, agent: CompactionContext) -> AsyncIterator[Event]: ...

    def compact_now(self, agent: CompactionContext, focus: str | None) -> AsyncIterator[Event]:
        """`/compact [focus]`: a Full compact now, whatever the pressure."""
        ...


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
    output: ToolOutput | None = None  # set when decided without running (error, denial)
    started: bool = False
    notes: list[str] = field(default_factory=list)  # hooks' messages for the user


class Agent:
    def __init__(
        self,
        *,
        session: Session,
        provider: Provider,
        model: str,
        tools: ToolRegistry,
        policy: PermissionPolicy,
        chain: ContributionChain,
        compactor: CompactHook | None = None,
        max_turns: int | None = None,
        max_tokens: int = 8192,
        tool_ctx: ToolContext | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        self.session = session
        self.provider = provider
        self.model = model
        self.tools = tools
        self.policy = policy
        self.chain = chain
        self.compactor = compactor
        self.max_turns = max_turns
        self.max_tokens = max_tokens
        self.usage_total = Usage()
        self.usage_estimated = False  # some of usage_total was counted by Peri, not reported
        self.last_usage: Usage | None = None
        self.turns = 0  # model calls in this process
        self.denials: list[Denial] = []
        self.last_interruption: str | None = None  # the note recorded for the last turn, if any
        self.label: str | None = None  # a SubAgent's name, shown on its permission requests
        # Inputs that arrived while the loop was idle or busy (a background SubAgent's report);
        # the next Receive takes them all, before the prompt.
        self.inbox: list[str] = []
        self.hooks: Hooks | None = None  # the user's command hooks, when any are configured
        self.retry_max_wait = 60.0  # seconds: a longer retry-after fails the call at once
        self._counter = counter
        self._view_cache: tuple[tuple[int, int], list[Message]] | None = None
        self._live = LiveOutput()  # running tools' progress, yielded as ToolProgress events
        self.tool_ctx = tool_ctx or ToolContext(workspace=policy.workspace, session_dir=session.dir)

    @property
    def counter(self) -> TokenCounter:
        if self._counter is None:
            self._counter = default_counter()
        return self._counter

    def view(self) -> list[Message]:
        """The model's view, projected again only when entries were appended since the last call
        (the Compact phase and the request that follows it share one projection)."""
        entries = self.session.entries
        if self._view_cache is None or self._view_cache[0] != (id(entries), len(entries)):
            self._view_cache = ((id(entries), len(entries)), project(entries))
        return list(self._view_cache[1])

    def can_continue(self) -> bool:
        """Whether "keep going" has something to answer: the view ends with a user message."""
        view = self.view()
        return bool(view) and view[-1].role == "user"

    def build_request(self, *, tools: bool = True) -> ModelRequest:
        dynamic = self.chain.render(
            RequestContext(workspace=self.policy.workspace, turn=self.turns)
        )
        return ModelRequest(
            model=self.model,
            frozen_system=self.session.snapshot.system,
            dynamic_system=dynamic,
            messages=self.view(),
            tools=self.tools.specs() if tools else [],
            max_tokens=self.max_tokens,
            cache_marks=cache_marks(self.session.entries) if tools else (),
        )

    async def run(
        self, prompt: str | None = None, attachments: MessageEntry | None = None
    ) -> AsyncIterator[Event]:
        """Receive a prompt (None or blank means "keep going") and loop until the reply is final.
        `attachments`: what the prompt's `@path`s and pasted images attach, stored right after it.

        A turn that is cancelled or fails leaves an `Interruption` entry saying what ran."""
        self.last_interruption = None
        text = scrub_surrogates(prompt or "")
        progress = TurnProgress()
        try:
            received = [_queued(item) for item in self.inbox]
            if text.strip():
                received.append(MessageEntry(message=user_text(text)))
                if attachments is not None:
                    received.append(attachments)
                if self.hooks is not None:
                    self.hooks.guard.reset()
                    outcome = await self.hooks.run("UserPromptSubmit", prompt=text)
                    for notice in notices(outcome):
                        yield notice
                    if outcome.blocked:
                        yield TurnEnded("blocked", outcome.reason or "blocked by a hook")
                        return
                    received.extend(_queued(_hook_context(c)) for c in outcome.context)
            if received:
                self.session.append(*received)
                self.inbox.clear()
            async for event in self._turns(progress):
                if isinstance(event, TurnEnded) and event.reason == "error":
                    self._record_interruption(progress, "failed", event.error)
                yield event
                if isinstance(event, TurnEnded):
                    return
        except OSError as e:  # the session file cannot be written (disk full, read-only)
            yield TurnEnded("error", f"cannot write the session file: {e.strerror or e}")
        except (asyncio.CancelledError, GeneratorExit):
            self._record_interruption(progress, "cancelled")
            raise
        finally:
            if self.tool_ctx.agent_id is None:  # a skill's pre-approval lasts the main turn
                self.policy.end_turn()

    def _record_interruption(
        self,
        progress: TurnProgress,
        reason: Literal["cancelled", "failed"],
        error: str | None = None,
    ) -> None:
        note = interruption_note(progress, reason, error)
        self.last_interruption = note
        with contextlib.suppress(OSError):  # a disk that failed the turn may fail this too
            self.session.append(Interruption(reason=reason, text=note))

    async def _turns(self, progress: TurnProgress) -> AsyncIterator[Event]:
        calls = 0
        while True:
            if self.max_turns is not None and calls >= self.max_turns:
                yield TurnEnded("max_turns", f"stopped after {calls} model calls (--max-turns)")
                return
            async for event in self._compact():
                yield event
                if isinstance(event, TurnEnded):
                    return
            calls += 1
            self.turns += 1
            yield TurnStarted(calls)
            progress.phase = "reply"
            reply: list[tuple[MessageCompleted, ModelRequest]] = []
            async for event in self._reason(reply):
                yield event
            if not reply:  # the provider failed; _reason said so
                return
            completed, request = reply[0]
            message, bad_inputs = scrub_message(completed.message)
            usage, estimated = self._usage_of(completed, request, message)
            yield AssistantMessage(message, usage, completed.stop_reason, estimated=estimated)
            progress.phase = "tools"
            results: list[ToolResultPart] = []
            async for event in self._use_tools(message.tool_uses, results, progress, bad_inputs):
                yield event
            self._commit(message, usage, estimated, results)
            progress.reset()
            if not results:
                if await self._stop_hooks_say_go_on():
                    continue
                yield TurnEnded("done")
                return

    async def _stop_hooks_say_go_on(self) -> bool:
        """Stop hooks may send the agent back to work (a bounded number of rounds)."""
        if self.hooks is None or not self.hooks.has("Stop"):
            return False
        outcome = await self.hooks.run("Stop", stop_hook_active=self.hooks.guard.active)
        keep_going, _overruled = self.hooks.guard.keep_going(outcome)
        if keep_going:
            note = f"[A Stop hook asks you to continue: {outcome.reason or 'not done yet'}]"
            self.session.append(_queued(note))
        return keep_going

    async def _compact(self) -> AsyncIterator[Event]:
        if self.compactor is not None:
            async for event in self._counted(self.compactor.before_request(self)):
                yield event

    async def compact_now(self, focus: str | None = None) -> AsyncIterator[Event]:
        """`/compact [focus]`: a Full compact now (headless and the TUI call this)."""
        if self.compactor is None:
            return
        async for event in self._counted(self.compactor.compact_now(self, focus)):
            yield event

    async def _counted(self, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
        """Compaction's events, its summary requests' usage added to this agent's totals."""
        async for event in events:
            if isinstance(event, UsageSpent):
                self.usage_total = self.usage_total + event.usage
            yield event

    async def _reason(
        self, reply: list[tuple[MessageCompleted, ModelRequest]]
    ) -> AsyncIterator[Event]:
        """Stream one model call; the completed message and its request land in `reply`."""
        request = self.build_request()
        try:
            retrying = stream_with_retries(self.provider, request, max_wait=self.retry_max_wait)
            async for event in retrying:
                if isinstance(event, MessageCompleted):
                    reply.append((event, request))
                else:
                    yield event
        except ProviderError as e:
            reply.clear()
            yield TurnEnded("error", str(e))

    def _usage_of(
        self, completed: MessageCompleted, request: ModelRequest, message: Message
    ) -> tuple[Usage, bool]:
        """The provider's usage, or Peri's count of the request and reply when it sent none."""
        usage: Usage | None = completed.usage
        if usage is not None:
            return usage, False
        counted = Usage(
            input_tokens=_count_request(self.counter, request),
            output_tokens=self.counter.count_message(message),
        )
        return counted, True

    def _commit(
        self, message: Message, usage: Usage, estimated: bool, results: list[ToolResultPart]
    ) -> None:
        """The assistant message and all its tool results land together, in one write."""
        self.last_usage = usage
        self.usage_total = self.usage_total + usage
        self.usage_estimated = self.usage_estimated or estimated
        entries = [
            MessageEntry(
                message=message,
                usage=usage,
                model=self.model,
                cache_read_share=round(usage.cache_read_share, 4),
                usage_estimated=estimated,
            )
        ]
        if results:
            entries.append(MessageEntry(message=Message(role="user", content=list(results))))
        self.session.append(*entries)

    async def _use_tools(
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
            async for event in self._permit(item, bad_inputs.get(item.use.id)):
                yield event
        for item in planned:
            if item.output is not None:  # refused before running: unknown tool, bad input, denied
                yield _finished(item)
        runnable = [p for p in planned if p.output is None]
        for item in runnable:
            yield ToolCall(item.use.id, item.use.name, item.use.input)
        tasks: dict[asyncio.Future[None], _Planned] = {}
        for item in runnable:
            before = [t for t, p in tasks.items() if p.writes.conflicts(item.writes)]
            tasks[asyncio.ensure_future(self._call_after(item, before))] = item
        pending = set(tasks)
        try:
            while pending:
                waker: asyncio.Future[Any] = asyncio.ensure_future(self._live.changed.wait())
                try:
                    woken, _ = await asyncio.wait(
                        {*pending, waker}, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    waker.cancel()
                done = {t for t in pending if t in woken}
                pending -= done
                for report in self._live.take():
                    yield report
                for task in done:
                    item = tasks[task]
                    progress.finished.append(describe_call(item.use.name, item.use.input))
                    yield _finished(item)
                    for line in item.notes:
                        yield Notice(line, "warning")
        finally:  # cancelled: stop every running tool before the cancellation goes on
            for task in pending:
                item = tasks[task]
                where = progress.running if item.started else progress.not_started
                where.append(describe_call(item.use.name, item.use.input))
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        for item in planned:
            output = item.output or ToolOutput.error("the tool produced no result")
            results.append(
                ToolResultPart(
                    tool_use_id=item.use.id,
                    content=_clean(output.content),
                    is_error=output.is_error,
                )
            )

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
            pre = await self._pre_tool_use(tool.name, raw, item.use.id)
            for notice in notices(pre):
                yield notice
            if pre.blocked:
                raise ToolError(f"Blocked by a PreToolUse hook: {pre.reason}")
            decision = self.policy.decide(
                tool.name,
                tool.kind,
                raw,
                item.writes.paths,
                hook=pre.permission,
                hook_reason=pre.permission_reason,
            )
        except ToolError as e:
            item.output = ToolOutput.error(str(e))
            return
        except Exception as e:  # a path with a NUL byte, a broken tool: the call fails, not Peri
            item.output = ToolOutput.error(
                f"Could not check {tool.name} before running it ({type(e).__name__}: {e}); "
                "the call was not run. Fix the arguments and retry."
            )
            return
        async for event in self._answer(item, tool, raw, decision):
            yield event

    async def _answer(
        self, item: _Planned, tool: Tool, raw: dict[str, Any], decision: Decision
    ) -> AsyncIterator[Event]:
        """Apply a decision, asking the user when it says "ask"; a denial becomes the result."""
        answer: PermissionAnswer = "allow" if decision.action == "allow" else "deny"
        note = ""
        if decision.action == "ask":
            offers = (
                []
                if decision.outside_workspace or decision.protected
                else self.policy.suggestions(tool.name, tool.kind, raw, item.writes.paths)
            )
            future: asyncio.Future[PermissionAnswer] = asyncio.get_running_loop().create_future()
            asked = PermissionRequested(
                tool.name, raw, decision.reason, future, agent=self.label, suggestions=offers
            )
            yield asked
            answer = await future
            note = asked.deny_note.strip()
            if answer == "allow_session":
                self.policy.allow_for_session(offers)
            elif answer == "allow_project" and (problem := self.policy.allow_in_project(offers)):
                yield Notice(problem, "warning")
        if answer != "deny":
            self.tool_ctx.owners.claim(self.tool_ctx.agent_id, self.label or "", item.writes.paths)
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

    async def _pre_tool_use(self, name: str, raw: dict[str, Any], use_id: str) -> HookOutcome:
        if self.hooks is None:
            return HookOutcome()
        return await self.hooks.run(
            "PreToolUse", tool_name=name, tool_input=dict(raw), tool_use_id=use_id
        )

    async def _call_after(self, item: _Planned, before: list[asyncio.Future[None]]) -> None:
        """Run one call once the earlier calls that write what it writes have finished."""
        if before:
            await asyncio.wait(before)
        item.started = True
        tool = item.tool
        assert tool is not None
        ctx = dataclasses.replace(
            self.tool_ctx, call_id=item.use.id, progress=self._live.reporter(item.use)
        )
        paths = item.writes.paths
        if paths:
            await self._checkpoint("before", paths, item.use.id)
        try:
            item.output = await tool.call(item.params, ctx)
        except ToolError as e:
            item.output = ToolOutput.error(str(e))
        except Exception as e:  # a tool bug must reach the model as an error, not end the session
            item.output = ToolOutput.error(f"{tool.name} failed: {type(e).__name__}: {e}")
        if paths:
            await self._checkpoint("after", paths, item.use.id)
        if self.hooks is not None and self.hooks.has("PostToolUse"):
            item.output = await self._post_tool_use(item, item.output)

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
        outcome = await self.hooks.run(
            "PostToolUse",
            tool_name=item.tool.name,
            tool_input=dict(item.use.input),
            tool_use_id=item.use.id,
            tool_response={"output": text, "is_error": output.is_error},
        )
        item.notes.extend(n.text for n in notices(outcome))
        extra = [f"[PostToolUse hook: {outcome.reason}]"] if outcome.blocked else []
        extra += [f"[PostToolUse hook context: {c}]" for c in outcome.context]
        if not extra:
            return output
        return ToolOutput([*output.content, TextPart(text="\n".join(extra))], output.is_error)


ORIGIN_QUEUED = "queued"  # a user-side message Peri queued (a background SubAgent's report)


def _hook_context(text: str) -> str:
    return f"[Context from a UserPromptSubmit hook]\n{text}"


def _queued(text: str) -> MessageEntry:
    return MessageEntry.model_validate({"message": user_text(text), "origin": ORIGIN_QUEUED})


def _count_request(counter: TokenCounter, request: ModelRequest) -> int:
    """What a request puts into the window, as the counter sees it: system, tools, messages."""
    tools = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in request.tools
    ]
    base = counter.count_text(request.frozen_system) + counter.count_text(request.dynamic_system)
    return (
        base
        + (counter.count_json(tools) if tools else 0)
        + counter.count_messages(request.messages)
    )


def _clean(content: list[Any]) -> list[Any]:
    """Tool output as the transcript can store it (no lone surrogates)."""
    return [
        TextPart(text=scrub_surrogates(p.text)) if isinstance(p, TextPart) else p for p in content
    ]


def _finished(item: _Planned) -> ToolFinished:
    output = item.output or ToolOutput.error("the tool produced no result")
    text = "".join(p.text if isinstance(p, TextPart) else "[image]" for p in output.content)
    return ToolFinished(item.use.id, item.use.name, scrub_surrogates(text), output.is_error)
