"""Counting and estimating tokens: o200k_base through tiktoken when it can be loaded offline,
else a calibrated character-class estimate; either way a smoothed ratio tracks what the provider
reports.

tiktoken is an optional accelerator: it is imported lazily, and the BPE file comes from this
package (``data/o200k_base.tiktoken.gz``, its sha256 checked), never from the network. Any failure
(tiktoken missing, file missing, hash mismatch, parse error) falls back to the estimate.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import json
import logging
import math
import re
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from peri_cli.base.messages import (
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)

if TYPE_CHECKING:
    import tiktoken

log = logging.getLogger(__name__)

ENCODING_NAME = "o200k_base"
#: sha256 of the uncompressed o200k_base.tiktoken that OpenAI publishes.
O200K_BASE_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
DEFAULT_ENCODING_PATH = Path(__file__).parent / "data" / "o200k_base.tiktoken.gz"

# From tiktoken_ext.openai_public.o200k_base (MIT); tiktoken itself would fetch the ranks online.
O200K_PAT_STR = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
O200K_SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}

# Framing the providers add around content; small, and folded into the calibration anyway.
MESSAGE_OVERHEAD = 4
TOOL_USE_OVERHEAD = 8
TOOL_RESULT_OVERHEAD = 4

# Anthropic's image rule: about w*h/750 tokens after scaling the long edge to <= 1568 px, which
# tops out near 1,600. Used when the size cannot be read, too.
IMAGE_TOKENS_MAX = 1600
_IMAGE_LONG_EDGE = 1568
_IMAGE_PIXELS_PER_TOKEN = 750

RATIO_MIN = 0.5
RATIO_MAX = 2.0
DEFAULT_SMOOTHING = 0.3

Backend = Literal["tiktoken", "estimate"]


def load_encoding(
    path: Path,
    *,
    expected_sha256: str = O200K_BASE_SHA256,
    name: str = ENCODING_NAME,
    pat_str: str = O200K_PAT_STR,
    special_tokens: dict[str, int] | None = None,
) -> tiktoken.Encoding | None:
    """Build an Encoding from a local .tiktoken (optionally gzipped) file; None on any failure.

    Parses the ranks itself rather than via ``tiktoken.load.load_tiktoken_bpe``, which would
    also copy the file into a temp-dir cache and cannot read gzip.
    """
    try:
        import tiktoken
    except ImportError:
        log.info("tiktoken is not installed; estimating token counts")
        return None
    try:
        raw = path.read_bytes()
        data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        digest = hashlib.sha256(data).hexdigest()
        if digest != expected_sha256:
            log.warning("%s: sha256 %s, expected %s; estimating", path, digest, expected_sha256)
            return None
        fields = data.split()  # "<base64 token> <rank>" per line
        if len(fields) % 2:
            raise ValueError("a line without a rank")
        ranks = dict(
            zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True)
        )
        return tiktoken.Encoding(
            name=name,
            pat_str=pat_str,
            mergeable_ranks=ranks,
            special_tokens=O200K_SPECIAL_TOKENS if special_tokens is None else special_tokens,
        )
    except Exception as e:  # a broken file must never break the agent
        log.warning("cannot load %s from %s (%s); estimating token counts", name, path, e)
        return None


# --- the estimate ---------------------------------------------------------------------------
# ASCII coefficients fitted (least squares on relative error) against o200k_base on ~360 chunks
# of Python, Markdown/README prose, JSON, config files, shell output and random base64/hex:
# aggregate error within +-5% per kind (10% for config files), 90% of 1.5 KB chunks within
# +-16%. Letter "pieces" split like o200k's pre-tokenizer does (camelCase -> camel, Case).
# CJK sits between o200k (~0.7 token/char) and cl100k or Claude (~1.0); the other non-ASCII
# weights are rounded from spot checks.
_W_PIECE = 0.76  # per ASCII letter piece
_W_LETTER = 0.08  # per ASCII letter
_W_PUNCT = 0.39  # per ASCII punctuation character
_W_DIGIT = 0.77  # per digit
_W_SPACE_RUN = 1.97  # per run of 2+ whitespace (indentation, blank lines)
_W_CJK = 0.8  # per Han/kana/Hangul/fullwidth character
_W_ALPHABETIC = 0.3  # per accented Latin, Greek, Cyrillic, Hebrew, Arabic ... character
_W_ASTRAL = 1.5  # per character beyond the BMP (emoji mostly)
_W_OTHER = 0.5  # per other non-ASCII character (symbols, box drawing, Indic ...)

_PIECE_RE = re.compile(r"[A-Z]*[a-z]+|[A-Z]+")
_PUNCT_RE = re.compile(r"[!-/:-@\[-`{-~]")
_DIGIT_RE = re.compile(r"[0-9]")
_SPACE_RUN_RE = re.compile(r"\s{2,}")
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")
_CJK_RE = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
_ALPHABETIC_RE = re.compile(r"[\u00c0-\u07ff]")
_ASTRAL_RE = re.compile(r"[\U00010000-\U0010ffff]")


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate of the o200k_base count (code, prose, JSON, CJK)."""
    if not text:
        return 0
    pieces = _PIECE_RE.findall(text)
    total = (
        _W_PIECE * len(pieces)
        + _W_LETTER * sum(map(len, pieces))
        + _W_PUNCT * len(_PUNCT_RE.findall(text))
        + _W_DIGIT * len(_DIGIT_RE.findall(text))
        + _W_SPACE_RUN * len(_SPACE_RUN_RE.findall(text))
    )
    if not text.isascii():
        cjk = len(_CJK_RE.findall(text))
        alphabetic = len(_ALPHABETIC_RE.findall(text))
        astral = len(_ASTRAL_RE.findall(text))
        other = len(_NON_ASCII_RE.findall(text)) - cjk - alphabetic - astral
        total += _W_CJK * cjk + _W_ALPHABETIC * alphabetic + _W_ASTRAL * astral + _W_OTHER * other
    return max(1, round(total))


# --- images ---------------------------------------------------------------------------------


def image_tokens(data_b64: str) -> int:
    """Tokens for a base64 image from its pixel size, or IMAGE_TOKENS_MAX if unreadable."""
    size = image_size(data_b64)
    if size is None:
        return IMAGE_TOKENS_MAX
    w, h = size
    scale = min(1.0, _IMAGE_LONG_EDGE / max(w, h))
    tokens = math.ceil(w * scale * h * scale / _IMAGE_PIXELS_PER_TOKEN)
    return max(1, min(IMAGE_TOKENS_MAX, tokens))


def image_size(data_b64: str) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF, WebP or JPEG header, decoding only a prefix."""
    head = _b64_prefix(data_b64, 64 * 1024)
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        return _positive(int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big"))
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return _positive(int.from_bytes(head[6:8], "little"), int.from_bytes(head[8:10], "little"))
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp_size(head)
    if head[:2] == b"\xff\xd8":
        return _jpeg_size(head)
    return None


def _b64_prefix(data: str, n_bytes: int) -> bytes:
    chunk = data[: (n_bytes // 3) * 4].strip()
    chunk = chunk[: len(chunk) - len(chunk) % 4]
    try:
        return base64.b64decode(chunk)
    except (binascii.Error, ValueError):
        return b""


def _positive(w: int, h: int) -> tuple[int, int] | None:
    return (w, h) if w > 0 and h > 0 else None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    kind = head[12:16]
    if kind == b"VP8X" and len(head) >= 30:
        w = int.from_bytes(head[24:27], "little") + 1
        h = int.from_bytes(head[27:30], "little") + 1
        return _positive(w, h)
    if kind == b"VP8 " and len(head) >= 30:
        w = int.from_bytes(head[26:28], "little") & 0x3FFF
        h = int.from_bytes(head[28:30], "little") & 0x3FFF
        return _positive(w, h)
    if kind == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return _positive((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    return None


_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(head):
        if head[i] != 0xFF:
            return None
        marker = head[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # standalone markers
            i += 2
            continue
        if marker in _JPEG_SOF:
            h = int.from_bytes(head[i + 5 : i + 7], "big")
            w = int.from_bytes(head[i + 7 : i + 9], "big")
            return _positive(w, h)
        i += 2 + int.from_bytes(head[i + 2 : i + 4], "big")
    return None


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
                        self._raw = _exact_counter(enc)
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


# tiktoken's regex recurses on long whitespace runs: a million spaces overflows its stack and
# panics (a BaseException). Long texts go in newline-aligned chunks, costing a token or so per cut.
CHUNK_CHARS = 50_000


def _exact_counter(enc: tiktoken.Encoding) -> Callable[[str], int]:
    encode = enc.encode_ordinary

    def count(text: str) -> int:
        try:
            if len(text) <= CHUNK_CHARS:
                return len(encode(text)) if text else 0
            return sum(len(encode(chunk)) for chunk in _chunks(text, CHUNK_CHARS))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # pyo3's PanicException is not an Exception
            log.warning("tiktoken failed on %d chars (%s); estimating them", len(text), e)
            return estimate_tokens(text)

    return count


def _chunks(text: str, size: int) -> Iterator[str]:
    start, end_of_text = 0, len(text)
    while start < end_of_text:
        end = min(end_of_text, start + size)
        if end < end_of_text:
            cut = text.rfind("\n", start + size // 2, end)
            end = end if cut == -1 else cut + 1
        yield text[start:end]
        start = end


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
