"""The o200k_base encoding, loaded offline: tiktoken is an optional accelerator, imported lazily,
and the BPE file comes from this package (``data/o200k_base.tiktoken.gz``, its sha256 checked),
never from the network. Any failure (tiktoken missing, file missing, hash mismatch, parse error)
gives None, and the counter falls back to the estimate."""

from __future__ import annotations

import binascii
import hashlib
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from peri_cli.context.estimate import estimate_tokens

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
        import gzip  # here, not at start: only loading a tokenizer file needs it

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


# tiktoken's regex recurses on long whitespace runs: a million spaces overflows its stack and
# panics (a BaseException). Long texts go in newline-aligned chunks, costing a token or so per cut.
CHUNK_CHARS = 50_000


def exact_counter(enc: tiktoken.Encoding) -> Callable[[str], int]:
    """Counts with `enc`, in chunks for long texts; the estimate where tiktoken fails."""
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
