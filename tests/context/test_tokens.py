"""Token counting: exact o200k_base offline, the estimate fallback, calibration, images."""

from __future__ import annotations

import base64
import gzip
import hashlib
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from peri_cli.base.messages import (
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    user_text,
)
from peri_cli.context.encoding import (
    CHUNK_CHARS,
    DEFAULT_ENCODING_PATH,
    O200K_BASE_SHA256,
    load_encoding,
)
from peri_cli.context.estimate import IMAGE_TOKENS_MAX, estimate_tokens, image_size, image_tokens
from peri_cli.context.tokens import (
    MESSAGE_OVERHEAD,
    RATIO_MAX,
    RATIO_MIN,
    TokenCounter,
    default_counter,
)

if TYPE_CHECKING:
    from tiktoken import Encoding

tiktoken = pytest.importorskip("tiktoken")

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"

ENGLISH = (
    "The transcript is the record; everything else is a projection of it. Compaction, clearing "
    "and directives append entries, and the projection rebuilds the model's view from them. "
    "When the conversation grows past the budget, older tool results are trimmed first, then "
    "the oldest turns are summarised, while the most recent exchanges are kept verbatim so the "
    "model never loses track of what it was doing. Counting tokens has to be fast, because it "
    "happens before every request, and it should agree with what the provider reports."
) * 3

CODE = """
import json
from dataclasses import dataclass, field


@dataclass
class Entry:
    kind: str
    payload: dict[str, object] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"kind": self.kind, **self.payload}, sort_keys=True)


def load(path: str) -> list[Entry]:
    entries: list[Entry] = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: {e}") from e
            entries.append(Entry(data.pop("kind"), data))
    return entries
"""

JSON_TEXT = (
    '{"name": "edit", "input": {"path": "peri_cli/core/tokens.py", "old_string": "return n",'
    ' "new_string": "return max(0, n)", "replace_all": false}, "id": "toolu_01A2B3C4D5"}'
) * 4

CHINESE = (
    "在软件开发中，版本控制系统是团队协作的基础。开发者通过提交记录追踪每一次修改，并在出现问题时"
    "回滚到之前的稳定版本。一个好的提交信息应该简洁地说明修改的内容和原因，这样其他成员在阅读历史"
    "记录时能够快速理解代码的演变过程。测试是保证代码质量的重要手段。"
)

JAPANESE = (
    "このツールはターミナルで動作するコーディングアシスタントです。ファイルを読み込み、コードを"
    "編集し、コマンドを実行します。会話が長くなりすぎると、古いメッセージを要約して、重要な情報と"
    "最近のやり取りだけを残します。"
)

SAMPLES = [ENGLISH, CODE, JSON_TEXT, CHINESE, JAPANESE, "hello world", "x = 1\n", "a" * 500]
SAMPLE_IDS = ["english", "code", "json", "chinese", "japanese", "hello", "assign", "aaa"]


@pytest.fixture(scope="module")
def official_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped ranks, uncompressed, stored where tiktoken's own cache looks for them."""
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    path = cache / hashlib.sha1(O200K_URL.encode()).hexdigest()
    path.write_bytes(gzip.decompress(DEFAULT_ENCODING_PATH.read_bytes()))
    return path


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    c = TokenCounter()
    assert c.warm() == "tiktoken"
    return c


@pytest.fixture(scope="module")
def reference(official_file: Path) -> Encoding:
    """tiktoken's own o200k_base (its pattern and special tokens), fed from the cache offline."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TIKTOKEN_CACHE_DIR", str(official_file.parent))
    try:
        enc: Encoding = tiktoken.get_encoding("o200k_base")
        return enc
    finally:
        mp.undo()


def test_the_shipped_file_is_the_official_o200k_base() -> None:
    data = gzip.decompress(DEFAULT_ENCODING_PATH.read_bytes())
    assert hashlib.sha256(data).hexdigest() == O200K_BASE_SHA256


@pytest.mark.parametrize("text", SAMPLES, ids=SAMPLE_IDS)
def test_counts_match_tiktokens_own_o200k_base(
    counter: TokenCounter, reference: Encoding, text: str
) -> None:
    assert counter.raw_text(text) == len(reference.encode_ordinary(text))
    assert counter.count_text(text) == counter.raw_text(text)  # ratio starts at 1.0


def test_long_texts_are_counted_in_chunks_without_drift(
    counter: TokenCounter, reference: Encoding
) -> None:
    text = (ENGLISH + CODE + JSON_TEXT) * 40
    assert len(text) > 2 * CHUNK_CHARS
    exact = len(reference.encode_ordinary(text))
    assert abs(counter.raw_text(text) - exact) <= 5


def test_a_huge_whitespace_run_does_not_crash_tiktoken(counter: TokenCounter) -> None:
    # Unchunked, tiktoken's regex overflows its stack on this and panics.
    n = counter.raw_text(" " * 1_000_000 + "x")
    assert 7_000 < n < 9_000


def test_known_token_ids() -> None:
    enc = load_encoding(DEFAULT_ENCODING_PATH)
    assert enc is not None
    assert enc.encode("hello world") == [24912, 2375]
    assert enc.encode("<|endoftext|>", allowed_special="all") == [199999]


def test_special_token_text_counts_as_plain_text(counter: TokenCounter) -> None:
    assert counter.count_text("<|endoftext|> and <|endofprompt|>") > 2


def test_an_uncompressed_file_loads_too(official_file: Path) -> None:
    assert TokenCounter(encoding_path=official_file).backend == "tiktoken"


def test_a_tampered_file_falls_back_to_the_estimate(tmp_path: Path) -> None:
    data = bytearray(gzip.decompress(DEFAULT_ENCODING_PATH.read_bytes()))
    data[100] ^= 0x01
    tampered = tmp_path / "o200k_base.tiktoken"
    tampered.write_bytes(bytes(data))

    assert load_encoding(tampered) is None
    c = TokenCounter(encoding_path=tampered)
    assert c.backend == "estimate"
    assert c.count_text(ENGLISH) == estimate_tokens(ENGLISH)


@pytest.mark.parametrize(
    "content", [b"", b"\x1f\x8b not really gzip", b"not base64 at all\n", b"QQ== 0\nQg==\n"]
)
def test_broken_files_fall_back_without_raising(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.tiktoken"
    path.write_bytes(content)
    digest = hashlib.sha256(content).hexdigest()  # even a matching hash cannot save a bad file
    assert load_encoding(path, expected_sha256=digest) is None
    assert TokenCounter(encoding_path=path, expected_sha256=digest).backend == "estimate"


def test_a_missing_file_or_no_path_means_the_estimate(tmp_path: Path) -> None:
    assert TokenCounter(encoding_path=tmp_path / "absent.tiktoken").backend == "estimate"
    assert TokenCounter(encoding_path=None).count_text("hello world") == estimate_tokens(
        "hello world"
    )


ESTIMATE_CASES = [
    ("english", ENGLISH),
    ("code", CODE),
    ("json", JSON_TEXT),
    ("chinese", CHINESE),
    ("japanese", JAPANESE),
]


@pytest.mark.parametrize(("name", "text"), ESTIMATE_CASES)
def test_the_estimate_is_within_35_percent_of_tiktoken(
    counter: TokenCounter, name: str, text: str
) -> None:
    exact = counter.raw_text(text)
    estimate = estimate_tokens(text)
    assert 0.65 * exact <= estimate <= 1.35 * exact, (name, estimate, exact)


def test_the_estimate_of_nothing_is_nothing() -> None:
    assert estimate_tokens("") == 0
    assert TokenCounter(encoding_path=None).count_text("") == 0
    assert estimate_tokens("a") == 1


def test_calibration_moves_toward_the_reported_count() -> None:
    c = TokenCounter(encoding_path=None)
    estimated = c.count_text(ENGLISH)
    reported = round(estimated * 1.3)
    for _ in range(30):
        c.calibrate(c.count_text(ENGLISH), reported)
    assert c.ratio == pytest.approx(1.3, abs=0.01)
    assert abs(c.count_text(ENGLISH) - reported) <= 2


def test_one_sample_moves_the_ratio_part_way() -> None:
    c = TokenCounter(encoding_path=None, smoothing=0.5)
    assert c.calibrate(1000, 1400) == pytest.approx(1.2)
    # `estimated` is what the counter returned under the current ratio
    assert c.calibrate(1200, 1200) == pytest.approx(1.2)


def test_calibration_is_clamped_and_ignores_tiny_samples() -> None:
    c = TokenCounter(encoding_path=None)
    for _ in range(50):
        c.calibrate(1000, 100_000)
    assert c.ratio == RATIO_MAX
    for _ in range(50):
        c.calibrate(1000, 1)
    assert c.ratio == RATIO_MIN
    assert c.calibrate(3, 3000) == RATIO_MIN
    assert c.calibrate(1000, 0) == RATIO_MIN
    c.reset_calibration()
    assert c.ratio == 1.0
    assert TokenCounter(encoding_path=None, ratio=9.0).ratio == RATIO_MAX


def test_counts_apply_the_ratio_after_summing() -> None:
    c = TokenCounter(encoding_path=None, ratio=1.5)
    msgs = [user_text(ENGLISH), user_text(CODE)]
    raw = sum(c.raw_message(m) for m in msgs)
    assert c.count_messages(msgs) == round(raw * 1.5)
    assert c.count_message(msgs[0]) == round(c.raw_message(msgs[0]) * 1.5)


def test_a_message_counts_every_part(counter: TokenCounter) -> None:
    raw = counter.raw_text
    tool_use = ToolUsePart(id="t1", name="read", input={"path": "README.md", "limit": 20})
    result = ToolResultPart(tool_use_id="t1", content=[TextPart(text=CODE)])
    thinking = ThinkingPart(thinking=ENGLISH, signature="sig")
    msg = Message(role="assistant", content=[TextPart(text="ok"), thinking, tool_use])
    expected = MESSAGE_OVERHEAD + raw("ok") + raw(ENGLISH) + raw("read")
    assert counter.raw_message(msg) > expected + raw('{"path": "README.md", "limit": 20}')
    assert counter.raw_message(Message(role="user", content=[result])) > raw(CODE)
    assert counter.count_messages([]) == 0


def test_counting_a_conversation_again_is_fast(counter: TokenCounter) -> None:
    msgs = [user_text(f"{i} {ENGLISH[:1000]}") for i in range(1000)]
    first = counter.count_messages(msgs)
    start = time.perf_counter()
    again = counter.count_messages(msgs)
    elapsed = time.perf_counter() - start
    assert again == first
    assert elapsed < 0.05


def test_equal_messages_count_the_same(counter: TokenCounter) -> None:
    a, b = user_text(CODE), user_text(CODE)
    assert counter.count_message(a) == counter.count_message(b)


def test_default_counter_is_shared() -> None:
    assert default_counter() is default_counter()


def test_importing_the_core_does_not_import_tiktoken() -> None:
    code = "import sys, peri_cli.context.tokens, peri_cli.base.models\n"
    code += "print('tiktoken' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- images -------------------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _png(w: int, h: int) -> str:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return _b64(b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\0" * 40)


def _gif(w: int, h: int) -> str:
    return _b64(b"GIF89a" + struct.pack("<HH", w, h) + b"\0" * 20)


def _jpeg(w: int, h: int) -> str:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\1\1\0\0\1\0\1\0\0"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, h, w, 1) + b"\1\x11\0"
    return _b64(b"\xff\xd8" + app0 + sof0 + b"\0" * 20)


def _webp_vp8x(w: int, h: int) -> str:
    chunk = b"VP8X" + struct.pack("<I", 10) + b"\0\0\0\0" + (w - 1).to_bytes(3, "little")
    chunk += (h - 1).to_bytes(3, "little")
    return _b64(b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk + b"\0" * 8)


@pytest.mark.parametrize("make", [_png, _gif, _jpeg, _webp_vp8x])
def test_image_sizes_are_read_from_headers(make: object) -> None:
    assert callable(make)
    assert image_size(make(640, 480)) == (640, 480)


def test_image_tokens_follow_pixels_and_are_capped() -> None:
    assert image_tokens(_png(750, 100)) == 100
    assert image_tokens(_png(1000, 1000)) == 1334
    assert image_tokens(_png(4000, 3000)) == IMAGE_TOKENS_MAX
    assert image_tokens(_png(1, 1)) == 1
    assert image_tokens("not an image") == IMAGE_TOKENS_MAX
    assert image_tokens("") == IMAGE_TOKENS_MAX


def test_images_in_messages_and_tool_results(counter: TokenCounter) -> None:
    img = ImagePart(media_type="image/png", data=_png(750, 100))
    assert counter.raw_message(Message(role="user", content=[img])) == MESSAGE_OVERHEAD + 100
    result = ToolResultPart(tool_use_id="t", content=[img])
    assert counter.raw_message(Message(role="user", content=[result])) > 100
