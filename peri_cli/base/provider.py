"""The provider port: what the loop needs from a model API, with no SDK type crossing it."""

from __future__ import annotations

import fnmatch
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from peri_cli.base.messages import Message, Usage

# Tool input that was not a JSON object (a model sending nonsense) arrives as {RAW_INPUT_KEY: text}.
# It stays a dict so the message can be stored and sent back; the loop answers it with an error
# tool_result so the model can try again.
RAW_INPUT_KEY = "_raw"


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ModelRequest:
    """One model call. `frozen_system` is byte-identical all session; `dynamic_system` is not."""

    model: str
    frozen_system: str
    dynamic_system: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int = 8192
    # Indexes of messages whose end is worth a prompt-cache breakpoint besides the last one (the
    # last message compaction left unchanged); a provider without explicit caching ignores them.
    cache_marks: tuple[int, ...] = ()


# Stream events a provider yields while a reply arrives.


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True)
class ToolUseStarted:
    id: str
    name: str


StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"]


@dataclass(frozen=True)
class MessageCompleted:
    """The whole assistant message. Only a reply with a stop reason is complete.

    `usage` is None when the provider reported none at all (llama.cpp and some Ollama versions
    stream no usage chunk): the consumer estimates it rather than believing in zero tokens.
    """

    message: Message
    stop_reason: StopReason
    usage: Usage | None


StreamEvent = TextDelta | ThinkingDelta | ToolUseStarted | MessageCompleted


class ProviderError(Exception):
    """A failed model call. `retryable` errors are retried with backoff by the caller;
    `too_long`: the provider said the request is longer than the model's context window."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
        too_long: bool = False,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status
        self.too_long = too_long


class StreamInterrupted(ProviderError):
    """The stream ended without a stop reason: an interrupted turn, not a finished one."""

    def __init__(self, message: str = "the reply stream ended before the model finished") -> None:
        super().__init__(message, retryable=True)


class Provider(Protocol):
    """A model API. `stream` yields deltas and ends with exactly one MessageCompleted, or raises."""

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...

    async def list_models(self) -> list[str] | None:
        """The model names the server accepts (aliases it is known to take included; an entry
        may be a glob such as LiteLLM's `openai/*`), or None when it has no list or cannot be
        reached. Asked once per provider instance; the answer is cached."""
        ...


def model_listed(name: str, models: list[str]) -> bool:
    """Whether `name` is one of `models`, or matches one of its glob entries."""
    return name in models or any(
        "*" in m and fnmatch.fnmatchcase(name, m) for m in models if isinstance(m, str)
    )
