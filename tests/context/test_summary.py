"""The pure parts of Full compact: what was read and which skills were used."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from peri_cli.base.messages import Message, TextPart, ToolUsePart, tool_result, user_text
from peri_cli.context.directives import TruncateResult
from peri_cli.context.micro import ORIGIN_SUMMARY
from peri_cli.context.projection import visible_entries
from peri_cli.context.summary import (
    USER_TEXTS_KEY,
    files_read,
    keep_typed,
    read_current,
    skills_used,
    summary_messages,
    typed_texts,
    user_texts_block,
)
from peri_cli.session.transcript import MessageEntry
from tests.builders import assistant, counter, entry, read_use, results


def test_helpers_find_reads_and_skills() -> None:
    entries = [
        entry(user_text("x")),
        entry(
            assistant(
                read_use("1", "a.py"),
                read_use("2", "b.py"),
                ToolUsePart(id="3", name="Skill", input={"name": "pdf"}),
            )
        ),
        entry(
            Message(
                role="user",
                content=[
                    tool_result("1", "a"),
                    tool_result("2", "err", is_error=True),
                    tool_result("3", "s"),
                ],
            )
        ),
        entry(assistant(read_use("4", "c.py"))),
        entry(results("4", "c")),
    ]
    assert files_read(entries) == ["c.py", "a.py"]
    assert skills_used(entries) == ["pdf"]
    assert visible_entries(entries) == entries
    assert TruncateResult(message_id="m", tool_use_id="t", head=1, tail=1).key.startswith("trunc")


# --- what the user typed, and the summary request's size ------------------------------------


def test_typed_texts_are_the_persons_words_only() -> None:
    carried = MessageEntry.model_validate(
        {
            "message": user_text("summary"),
            "origin": ORIGIN_SUMMARY,
            USER_TEXTS_KEY: ["an older instruction"],
        }
    )
    entries = [
        carried,
        entry(user_text("first")),
        MessageEntry.model_validate({"message": user_text("file body"), "origin": "attachment"}),
        entry(assistant(read_use("1"))),
        entry(results("1", "result")),
        entry(user_text("   ")),
        entry(user_text("second")),
    ]
    assert typed_texts(entries) == ["an older instruction", "first", "second"]


def test_keep_typed_keeps_the_newest_within_the_budget_and_cuts_one_that_is_too_long() -> None:
    c = counter()
    texts = [f"message {n} " + "word " * 100 for n in range(10)]
    each = c.count_text(texts[0])
    kept = keep_typed(texts, budget=3 * each + 10, count=c.count_text)
    assert kept == texts[7:]
    huge = "start " + "filler " * 5_000 + " end"
    (cut,) = keep_typed([huge], budget=1_000, count=c.count_text)
    assert cut.startswith("start") and cut.endswith("end") and c.count_text(cut) < 1_100
    assert keep_typed([huge], budget=100, count=c.count_text) == []
    block = user_texts_block(kept, 7)
    assert block.index("message 7") < block.index("message 9")
    assert "7 older messages" in block


def test_summary_messages_cut_tool_blocks_and_long_texts() -> None:
    view = [
        user_text("a" * 50_000),
        assistant(
            ToolUsePart(id="w", name="Write", input={"file_path": "x.py", "content": "b" * 50_000})
        ),
        Message(role="user", content=[tool_result("w", "c" * 50_000)]),
    ]
    out = summary_messages(view, "Summarize.", result_chars=1_000, text_chars=2_000)
    sizes = [len(p.text) for m in out for p in m.content if isinstance(p, TextPart)]
    assert max(sizes) < 2_500
    assert all(isinstance(p, TextPart) for m in out for p in m.content)
    assert "not quoted" in out[1].text


def test_read_current_numbers_the_start_of_a_large_file(tmp_path: Path) -> None:
    f = tmp_path / "big.txt"
    f.write_text("line\n" * 300_000)  # 1.5 MB: more than is re-injected
    text = read_current(f)
    assert text is not None and text.startswith("     1\tline\n")
    assert text.endswith("(file continues)\n")
    assert read_current(tmp_path / "gone.txt") is None


def test_issue37_item5_compaction_rereads_no_fifo_or_device(tmp_path: Path) -> None:
    """A file the model read, swapped for a FIFO (or a link to /dev/zero) before the compaction,
    is left out of the re-injection instead of blocking the compaction."""
    fifo = tmp_path / "notes.md"
    os.mkfifo(fifo)
    got: list[str | None] = []
    thread = threading.Thread(target=lambda: got.append(read_current(fifo)), daemon=True)
    thread.start()
    thread.join(timeout=20)
    if thread.is_alive():  # let it go: open the other end and close it
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert got == [None], "read_current waited for a writer to the FIFO"
    (tmp_path / "zero").symlink_to("/dev/zero")
    assert read_current(tmp_path / "zero") is None
