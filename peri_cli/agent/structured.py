"""Structured output's decisions, pure: what a prompt asked to answer as JSON ends with.

The model delivers the answer by calling the `StructuredOutput` tool (its input is the answer,
its input schema the one asked for). Each call's check lands in a `StructuredCapture`; once the
turn is over, `decide` says: the value is accepted, or ONE retry is sent (a note telling the
model what failed), or, when the retry failed too, the prompt ends in an error. The checking
itself (JSON Schema) is the caller's: this room knows only its verdict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

STRUCTURED_TOOL = "StructuredOutput"
MAX_STRUCTURED_RETRIES = 1  # as Claude Code: one more turn, then an error
ACCEPTED = (
    "Structured output accepted. Your answer is complete: end your turn now, without calling "
    "more tools and without repeating the answer as text."
)


@dataclass
class StructuredCapture:
    """What the calls of the current attempt gave: the accepted value, or the last problem."""

    value: Any = None
    accepted: bool = False
    problem: str | None = None  # the last call's validation error (None: no failed call)
    calls: int = 0

    def accept(self, value: Any) -> None:
        self.value, self.accepted, self.problem = value, True, None
        self.calls += 1

    def refuse(self, problem: str) -> None:
        """A call whose input did not fit; a value accepted earlier in the attempt stays."""
        self.problem = problem
        self.calls += 1

    def next_attempt(self) -> None:
        """The retry's calls are judged on their own."""
        self.problem, self.calls = None, 0


@dataclass(frozen=True)
class Accept:
    value: Any


@dataclass(frozen=True)
class Retry:
    note: str  # the user-side message the retry sends


@dataclass(frozen=True)
class GiveUp:
    error: str  # the result's `error`


Decision = Accept | Retry | GiveUp


def decide(capture: StructuredCapture, retries: int) -> Decision:
    """After a turn that ended normally: accept, retry (`retries` sent so far), or give up."""
    if capture.accepted:
        return Accept(capture.value)
    failed = _what_failed(capture)
    if retries < MAX_STRUCTURED_RETRIES:
        return Retry(retry_note(capture))
    return GiveUp(
        f"no valid {STRUCTURED_TOOL} call after {retries} "
        f"retr{'y' if retries == 1 else 'ies'}: {failed}"
    )


def _what_failed(capture: StructuredCapture) -> str:
    if capture.problem is not None:
        return f"its input did not fit the schema ({capture.problem})"
    return f"{STRUCTURED_TOOL} was not called"


def retry_note(capture: StructuredCapture) -> str:
    """What the model is told when its turn ended without a valid answer."""
    if capture.problem is not None:
        return (
            f"[Your {STRUCTURED_TOOL} input did not fit the required schema: {capture.problem}. "
            f"Call {STRUCTURED_TOOL} again, once, with a corrected answer.]"
        )
    return (
        f"[You ended your turn without calling {STRUCTURED_TOOL}. The answer must be given as "
        f"structured output: call {STRUCTURED_TOOL} now, once, with your final answer as its "
        "input.]"
    )
