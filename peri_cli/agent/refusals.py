"""What a failed model call leads to: whether what it carried is sent again, and what the user is
told to do next.

A request the provider refused for its content (400/413: an attachment, an image, its size)
fails the same way every time, and every later request would carry it. So what it added since
the last request the provider accepted (the prompt with its attachments, or the last tool round:
the loop keeps their ids in `unaccepted`) is left out of the view by a `Refusal` entry, which the
projection honours: neither this session nor a resumed one sends it again. A context-length 400
first gets one compaction and one more try. Every other failure keeps the prompt, with the
interruption note the loop records.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from peri_cli.agent.interruption import describe_call
from peri_cli.base.events import Compacted, Event, TurnEnded
from peri_cli.base.provider import ProviderError
from peri_cli.session.store import Session
from peri_cli.session.transcript import Entry, MessageEntry, Refusal

REFUSED_STATUS = frozenset({400, 413})

LEFT_OUT = "This prompt is left out of the conversation, so it is not sent again: "
CHANGE_IT = LEFT_OUT + "change it, or what it attaches, and send it again."
SHORTEN_IT = LEFT_OUT + "shorten it, or free room with /compact or /clear, and send it again."
RESULTS_LEFT_OUT = (
    "The last tool calls' results are left out of the conversation, so they are not sent "
    "again (the calls' effects remain): send a message to go on."
)
AS_IT_STANDS = (
    "The conversation as it stands is refused: /rewind to before the prompt that brought it "
    "in, or /clear."
)
TOO_LONG_AS_IT_STANDS = "The conversation is too long for the model: /compact or /clear."
# (in this session: `peri -c` passes over a session that never got an answer)
AGAIN = "your next message in this session sends it again"
FIX_THEN_SEND = f"Your prompt is kept: once that is fixed, {AGAIN}."
TRY_LATER = f"Your prompt is kept: try again in a moment ({AGAIN})."
SEND_AGAIN = f"Your prompt is kept: {AGAIN}."


class Refusable(Protocol):
    """What this module needs of the loop's agent."""

    @property
    def session(self) -> Session: ...

    unaccepted: list[str]  # ids of what the next request adds to the last accepted one

    def overflow_compact(self) -> AsyncIterator[Event]:
        """One Full compaction after a context-length refusal (nothing when it is off)."""
        ...


@dataclass
class Attempts:
    """One model call's tries: a first context-length refusal may ask for one more."""

    compacted_once: bool = False
    again: bool = True

    def next(self) -> bool:
        go, self.again = self.again, False
        return go


async def after_failure(
    agent: Refusable, error: ProviderError, attempts: Attempts
) -> AsyncIterator[Event]:
    """After a failed call: for its first context-length refusal, one compaction, and then
    `attempts` asks for another try; else the TurnEnded that says what is kept and what to do."""
    if error.too_long and not attempts.compacted_once:
        attempts.compacted_once = True
        compacted = False
        async for event in agent.overflow_compact():
            compacted = compacted or isinstance(event, Compacted)
            yield event
        if compacted:
            attempts.again = True
            return
    yield ended(agent, error)


def ended(agent: Refusable, error: ProviderError) -> TurnEnded:
    """The end of a turn whose model call failed for good; a refusal leaves out what the
    request added (recorded as a `Refusal`)."""
    message = str(error)
    if not (error.too_long or error.status in REFUSED_STATUS):
        return TurnEnded("error", message, next_step=kept_step(error))
    ids = list(agent.unaccepted)
    if not ids:  # nothing new: the conversation itself is what is refused
        step = TOO_LONG_AS_IT_STANDS if error.too_long else AS_IT_STANDS
        return TurnEnded("error", message, next_step=step)
    left = [e for e in agent.session.entries if e.id in set(ids)]
    round_ = any(isinstance(e, MessageEntry) and e.message.role == "assistant" for e in left)
    note = results_note(left, message) if round_ else ""
    agent.session.append(Refusal(ids=ids, error=message, status=error.status, text=note))
    agent.unaccepted = []
    if round_:
        return TurnEnded("error", message, next_step=RESULTS_LEFT_OUT, left_out="results")
    step = SHORTEN_IT if error.too_long else CHANGE_IT
    return TurnEnded("error", message, next_step=step, left_out="prompt")


def kept_step(error: ProviderError) -> str:
    """What to do after a failure that keeps the prompt."""
    if error.retry_after is not None and not error.retryable:
        return SEND_AGAIN  # a wait longer than Peri's: the error says when
    if error.retryable:  # 429, 5xx, the network: retried already, and still failing
        return TRY_LATER
    # 401/403/404, no key, a bad base URL: the error says what to fix
    return FIX_THEN_SEND


def results_note(left: Sequence[Entry], error: str) -> str:
    """The model's note for a tool round left out: which calls had run."""
    calls = [
        describe_call(use.name, use.input)
        for e in left
        if isinstance(e, MessageEntry)
        for use in e.message.tool_uses
    ]
    ran = "; ".join(calls) or "none"
    return (
        f"[The provider refused the previous request ({error}). The results of these calls "
        f"were left out of this conversation; the calls had run and their effects remain: "
        f"{ran}. Check the current state before redoing anything.]"
    )
