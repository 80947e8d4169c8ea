"""The agent loop: Receive -> Compact -> Reason -> ToolUse, yielding typed events."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Literal, Protocol

from peri_cli.agent.interruption import TurnProgress, interruption_note
from peri_cli.agent.liveoutput import LiveOutput
from peri_cli.agent.refusals import Attempts, after_failure
from peri_cli.agent.toolround import Denial, ToolRound
from peri_cli.base.events import AssistantMessage, Event, TurnEnded, TurnStarted, UsageSpent
from peri_cli.base.messages import Message, ToolResultPart, Usage, scrub_message, user_text
from peri_cli.base.provider import MessageCompleted, ModelRequest, Provider, ProviderError
from peri_cli.base.retry import Retrying, stream_with_retries
from peri_cli.base.textsafe import scrub_surrogates
from peri_cli.base.tool import ToolContext, ToolRegistry
from peri_cli.context.contributions import ContributionChain, RequestContext
from peri_cli.context.projection import cache_marks, project
from peri_cli.context.tokens import TokenCounter, default_counter
from peri_cli.context.worklog import DURATIONS_KEY
from peri_cli.extensions.hookbackground import HOOK_WAKE_HEAD
from peri_cli.extensions.hookpoints import Hooks, notices
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.session.store import Session
from peri_cli.session.transcript import Interruption, MessageEntry

if TYPE_CHECKING:
    from peri_cli.agent.compaction.port import CompactionContext


class CompactHook(Protocol):
    """Runs in the Compact phase before every model call (the compaction module fills it)."""

    def before_request(self, agent: CompactionContext) -> AsyncIterator[Event]: ...

    def compact_now(self, agent: CompactionContext, focus: str | None) -> AsyncIterator[Event]:
        """`/compact [focus]`: a Full compact now, whatever the pressure."""
        ...

    def after_overflow(self, agent: CompactionContext) -> AsyncIterator[Event]:
        """The provider refused a request as longer than the window: one Full compact."""
        ...


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
        # Ids of what the next request adds to the last one the provider accepted (a prompt and
        # its attachments, or a tool round): what a refusal of its content leaves out.
        self.unaccepted: list[str] = []
        self.hooks: Hooks | None = None  # the user's command hooks, when any are configured
        self.retry_max_wait = 60.0  # seconds: a longer retry-after fails the call at once
        self._counter = counter
        self._view_cache: tuple[tuple[int, int], list[Message]] | None = None
        self._live = LiveOutput()  # running tools' progress, yielded as ToolProgress events
        self.tool_ctx = tool_ctx or ToolContext(workspace=policy.workspace, session_dir=session.dir)

    @property
    def report_waiting(self) -> bool:
        """A background SubAgent's report, or a rewake hook's output, is in the inbox: an idle
        parent takes it at once (other items, a hook's context or a note, wait for the user's
        next prompt)."""
        return any(item.startswith((REPORT_HEAD, HOOK_WAKE_HEAD)) for item in self.inbox)

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
            for notice in self.hooks.waiting_notices() if self.hooks is not None else ():
                yield notice  # what background hooks that ended had to say (a rewake's summary)
            received = [_queued(item) for item in self.inbox]
            queued = len(received)  # the reports waiting before this prompt, not its own
            if text.strip():
                received.append(MessageEntry(message=user_text(text)))
                if attachments is not None:
                    received.append(attachments)
                if self.hooks is not None:
                    self.hooks.guard.reset()
                    outcome = await self.hooks.run("UserPromptSubmit", prompt=text)
                    for notice in notices(outcome):
                        yield notice
                    if outcome.stop_reason is not None:  # `"continue": false`: not sent
                        yield TurnEnded("stopped", outcome.stop_reason)
                        return
                    if outcome.blocked:
                        yield TurnEnded("blocked", outcome.reason or "blocked by a hook")
                        return
                    received.extend(_queued(_hook_context(c)) for c in outcome.context)
            if received:
                self.session.append(*received)
                self.inbox.clear()
            self.unaccepted = [e.id for e in received[queued:]]
            async for event in self._turns(progress):
                if isinstance(event, TurnEnded) and event.reason == "error" and not event.left_out:
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
            self.policy.end_turn(self.tool_ctx.agent_id)  # a skill's pre-approval ends here

    def _record_interruption(
        self,
        progress: TurnProgress,
        reason: Literal["cancelled", "failed"],
        error: str | None = None,
    ) -> None:
        note = interruption_note(progress, reason, error)
        self.last_interruption = note
        with contextlib.suppress(OSError):  # a disk that failed the turn may fail this too
            replied = progress.phase != "waiting"
            self.session.append(Interruption(reason=reason, text=note, replied=replied))

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
            reply: list[tuple[MessageCompleted, ModelRequest]] = []
            async for event in self._reason(reply):
                if not isinstance(event, Retrying | TurnEnded):
                    progress.phase = "reply"  # the model's reply has begun
                yield event
            if not reply:  # the provider failed; _reason said so
                return
            completed, request = reply[0]
            message, bad_inputs = scrub_message(completed.message)
            usage, estimated = self._usage_of(completed, request, message)
            yield AssistantMessage(message, usage, completed.stop_reason, estimated=estimated)
            progress.phase = "tools"
            results: list[ToolResultPart] = []
            tool_round = ToolRound(
                self.tools,
                self.policy,
                self.tool_ctx,
                self.hooks,
                self.label,
                self._live,
                self.denials,
            )
            async for event in tool_round.run(message.tool_uses, results, progress, bad_inputs):
                yield event
            self._commit(message, usage, estimated, results, tool_round.durations)
            progress.reset()
            if tool_round.stop_reason is not None:  # a hook's `"continue": false`
                yield TurnEnded("stopped", tool_round.stop_reason)
                return
            if tool_round.ended:  # an answer ended the turn here (a headless run's plan)
                yield TurnEnded("done")
                return
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

    async def overflow_compact(self) -> AsyncIterator[Event]:
        """After a context-length refusal: one Full compact (`refusals`)."""
        if self.compactor is None:
            return
        async for event in self._counted(self.compactor.after_overflow(self)):
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
        """Stream one model call; the completed message and its request land in `reply`. A
        failure ends the turn as `refusals` decides (after one compaction and another try, for
        a request longer than the window)."""
        attempts = Attempts()
        while attempts.next():
            request = self.build_request()
            try:
                retrying = stream_with_retries(self.provider, request, max_wait=self.retry_max_wait)
                async for event in retrying:
                    if isinstance(event, MessageCompleted):
                        reply.append((event, request))
                    else:
                        yield event
                self.unaccepted = []
            except ProviderError as e:
                reply.clear()
                async for ending in after_failure(self, e, attempts):
                    yield ending

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
        self,
        message: Message,
        usage: Usage,
        estimated: bool,
        results: list[ToolResultPart],
        durations: dict[str, int],
    ) -> None:
        """The assistant message and all its tool results land together, in one write, the
        results with how long each call that ran took (`DURATIONS_KEY`)."""
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
            content = Message(role="user", content=list(results))
            entries.append(
                MessageEntry.model_validate({"message": content, DURATIONS_KEY: durations})
            )
        self.session.append(*entries)
        self.unaccepted = [e.id for e in entries]


REPORT_HEAD = "[SubAgent "  # how a SubAgent's report to its parent begins
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
