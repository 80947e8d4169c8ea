"""Counting and estimating tokens: o200k_base through tiktoken when it can be loaded offline,
else a calibrated character-class estimate; either way a smoothed ratio tracks what the provider
reports.

The encoding is loaded offline (`encoding`); the estimate is in `estimate`. This module is the
counter: per-message framing, memoized counts and the calibration to the provider's reports.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from peri_cli.base.messages import (
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)
from peri_cli.context.encoding import (
    DEFAULT_ENCODING_PATH,
    O200K_BASE_SHA256,
    exact_counter,
    load_encoding,
)
from peri_cli.context.estimate import estimate_tokens, image_tokens

# Framing the providers add around content; small, and folded into the calibration anyway.
MESSAGE_OVERHEAD = 4
TOOL_USE_OVERHEAD = 8
TOOL_RESULT_OVERHEAD = 4

RATIO_MIN = 0.5
RATIO_MAX = 2.0
DEFAULT_SMOOTHING = 0.3

Backend = Literal["tiktoken", "estimate"]


# --- the counter ----------------------------------------------------------------------------


class TokenCounter:
    """Counts messages for the context budget; calibrated by what the provider reports.

    Every count_* result has the current ratio applied. Per-message raw counts are memoized by
    identity (messages are frozen), so re-counting a conversation each request is cheap.
    """

    def __init__(
        self,
        *,
        encoding_path: Path | None = DEFAULT_ENCODING_PATH,
        expected_sha256: str = O200K_BASE_SHA256,
        ratio: float = 1.0,
        smoothing: float = DEFAULT_SMOOTHING,
    ) -> None:
        """encoding_path=None never tries tiktoken; ratio seeds the calibration."""
        self._path = encoding_path
        self._sha256 = expected_sha256
        self._ratio = _clamp(ratio)
        self._smoothing = smoothing
        self._lock = threading.Lock()
        self._loaded = False
        self._raw: Callable[[str], int] = estimate_tokens
        self._backend: Backend = "estimate"
        self._memo: dict[int, tuple[weakref.ref[Message], int]] = {}

    # loading

    def warm(self) -> Backend:
        """Load the encoding now (it is otherwise loaded on first count); safe from a thread."""
        if not self._loaded:
            with self._lock:
                if not self._loaded:
                    enc = (
                        None
                        if self._path is None
                        else load_encoding(self._path, expected_sha256=self._sha256)
                    )
                    if enc is not None:
                        self._raw = exact_counter(enc)
                        self._backend = "tiktoken"
                    self._loaded = True
        return self._backend

    @property
    def backend(self) -> Backend:
        return self.warm()

    # calibration

    @property
    def ratio(self) -> float:
        return self._ratio

    def calibrate(self, estimated: int, reported: int) -> float:
        """Move the ratio toward reported/estimated; `estimated` is what this counter returned.

        An exponential moving average, clamped to [RATIO_MIN, RATIO_MAX]; tiny or empty samples
        are ignored. Returns the new ratio.
        """
        if estimated < 16 or reported <= 0:
            return self._ratio
        target = self._ratio * reported / estimated
        self._ratio = _clamp(self._ratio + self._smoothing * (target - self._ratio))
        return self._ratio

    def reset_calibration(self, ratio: float = 1.0) -> None:
        """Start over, e.g. after switching to a model with another tokenizer."""
        self._ratio = _clamp(ratio)

    # counting

    def count_text(self, text: str) -> int:
        return self._apply(self.raw_text(text))

    def count_json(self, value: object) -> int:
        """Tokens of a JSON value as sent (tool schemas, tool inputs)."""
        return self._apply(self.raw_text(_json(value)))

    def count_message(self, message: Message) -> int:
        return self._apply(self.raw_message(message))

    def count_messages(self, messages: Iterable[Message]) -> int:
        return self._apply(sum(self.raw_message(m) for m in messages))

    def raw_text(self, text: str) -> int:
        """Uncalibrated: exactly o200k_base when tiktoken is in use."""
        self.warm()
        return self._raw(text)

    def raw_message(self, message: Message) -> int:
        key = id(message)
        hit = self._memo.get(key)
        if hit is not None and hit[0]() is message:
            return hit[1]
        n = self._count_parts(message)
        self._memo[key] = (weakref.ref(message, _forgetter(self._memo, key)), n)
        return n

    def _count_parts(self, message: Message) -> int:
        raw = self.raw_text
        n = MESSAGE_OVERHEAD
        for part in message.content:
            if isinstance(part, TextPart):
                n += raw(part.text)
            elif isinstance(part, ThinkingPart):
                n += raw(part.thinking)
            elif isinstance(part, ToolUsePart):
                n += TOOL_USE_OVERHEAD + raw(part.name) + raw(_json(part.input))
            elif isinstance(part, ToolResultPart):
                n += TOOL_RESULT_OVERHEAD
                for item in part.content:
                    n += raw(item.text) if isinstance(item, TextPart) else image_tokens(item.data)
            elif isinstance(part, ImagePart):
                n += image_tokens(part.data)
        return n

    def _apply(self, raw: int) -> int:
        return round(raw * self._ratio)


def _forgetter(
    memo: dict[int, tuple[weakref.ref[Message], int]], key: int
) -> Callable[[weakref.ref[Message]], None]:
    # Runs when the message is freed, so before its id can be reused by another object.
    def forget(_ref: weakref.ref[Message]) -> None:
        memo.pop(key, None)

    return forget


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _clamp(ratio: float) -> float:
    return min(RATIO_MAX, max(RATIO_MIN, ratio))


_default: TokenCounter | None = None
_default_lock = threading.Lock()


def default_counter() -> TokenCounter:
    """The process-wide counter (shipped o200k_base, else the estimate); created on first use."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = TokenCounter()
    return _default
