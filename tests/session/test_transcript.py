import json
import multiprocessing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from peri_cli.base.messages import (
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    Usage,
    dump_message,
    load_message,
)
from peri_cli.context.projection import project
from peri_cli.session.transcript import (
    ClearMarker,
    CompactBoundary,
    Header,
    MessageEntry,
    ProjectionEntry,
    Snapshot,
    TornLineRepair,
    dump_entry,
)
from peri_cli.session.transcript_file import (
    SessionLocked,
    TranscriptError,
    TranscriptWriter,
    load,
    load_tail,
    read_older,
)


def header(session_id: str = "s1") -> Header:
    return Header(session_id=session_id, workspace="/w", snapshot=Snapshot(system="frozen"))


def write(path: Path, *entries) -> None:
    writer = TranscriptWriter(path)
    writer.append(*entries)
    writer.close()


def test_round_trip_of_every_entry_type(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    msg = MessageEntry(
        message=Message(role="assistant", content=[TextPart(text="hi")]),
        usage=Usage(input_tokens=3, output_tokens=4, cache_read_input_tokens=5),
        cache_read_share=0.42,
    )
    entries = [
        header(),
        msg,
        ProjectionEntry(directives=[{"kind": "trim", "target": msg.id}], tokens_before=9),
        CompactBoundary(summary_id=msg.id, tokens_before=10, tokens_after=2),
        ClearMarker(),
    ]
    write(path, *entries)
    loaded = load(path)
    assert loaded.entries == entries
    assert loaded.warnings == []
    # one JSON object per line, each with type and id
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        assert {"type", "id"} <= obj.keys()


def test_ids_are_time_ordered(tmp_path: Path) -> None:
    entries = [
        MessageEntry(message=Message(role="user", content=[TextPart(text=str(i))]))
        for i in range(50)
    ]
    assert [e.id for e in entries] == sorted(e.id for e in entries)


def test_torn_last_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = MessageEntry(message=Message(role="user", content=[TextPart(text="hello")]))
    write(path, header(), good)
    with path.open("ab") as f:
        f.write(b'{"type":"message","id":"x","message":{"role":"assis')
    loaded = load(path)
    assert [e.id for e in loaded.entries][-1] == good.id
    assert len(loaded.warnings) == 1 and "torn" in loaded.warnings[0]


def test_corrupt_middle_line_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    a = MessageEntry(message=Message(role="user", content=[TextPart(text="a")]))
    b = MessageEntry(message=Message(role="user", content=[TextPart(text="b")]))
    write(path, header(), a)
    with path.open("ab") as f:
        f.write(b"garbage that is not json\n")
    write(path, b)
    with pytest.raises(TranscriptError) as info:
        load(path)
    message = str(info.value)
    assert "corrupt line 3" in message and "3 other lines parse" in message
    assert "Traceback" not in message


def test_unknown_header_version_fails_closed(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    obj = header().model_dump(mode="json") | {"version": 99}
    path.write_text(json.dumps(obj) + "\n")
    with pytest.raises(TranscriptError, match="version 99 is not supported"):
        load(path)


def test_missing_header_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, MessageEntry(message=Message(role="user", content=[TextPart(text="a")])))
    with pytest.raises(TranscriptError, match="no session header"):
        load(path)


def _try_lock(path: str, queue) -> None:  # runs in another process
    try:
        TranscriptWriter(Path(path))
        queue.put("locked")
    except SessionLocked as e:
        queue.put(f"refused: {e}")


def test_a_second_process_cannot_write_the_same_session(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = TranscriptWriter(path)
    writer.append(header())
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_try_lock, args=(str(path), queue))
    proc.start()
    proc.join(30)
    answer = queue.get(timeout=5)
    assert answer.startswith("refused") and "another peri process" in answer
    writer.close()
    proc = ctx.Process(target=_try_lock, args=(str(path), queue))
    proc.start()
    proc.join(30)
    assert queue.get(timeout=5) == "locked"


def test_appends_never_rewrite_earlier_bytes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = TranscriptWriter(path)
    writer.append(header())
    before = path.read_bytes()
    writer.append(MessageEntry(message=Message(role="user", content=[TextPart(text="x")])))
    writer.close()
    assert path.read_bytes().startswith(before)


# --- property-based round trips -------------------------------------------------------------

text = st.text(max_size=40)
json_scalar = st.none() | st.booleans() | st.integers() | text
json_value = st.recursive(
    json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
parts = st.one_of(
    st.builds(TextPart, text=text),
    st.builds(ThinkingPart, thinking=text, signature=st.none() | text),
    st.builds(ImagePart, media_type=st.just("image/png"), data=text),
    st.builds(ToolUsePart, id=text, name=text, input=st.dictionaries(text, json_value, max_size=3)),
    st.builds(
        ToolResultPart,
        tool_use_id=text,
        content=st.lists(st.builds(TextPart, text=text), max_size=2),
        is_error=st.booleans(),
    ),
)
messages = st.builds(
    Message, role=st.sampled_from(["user", "assistant"]), content=st.lists(parts, max_size=4)
)


@given(messages)
def test_message_serializer_round_trips(message: Message) -> None:
    assert load_message(json.loads(json.dumps(dump_message(message)))) == message


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(messages, max_size=6))
def test_transcript_round_trips(tmp_path: Path, batch: list[Message]) -> None:
    path = tmp_path / "prop.jsonl"
    path.unlink(missing_ok=True)
    entries = [header(), *(MessageEntry(message=m) for m in batch)]
    write(path, *entries)
    assert load(path).entries == entries


# --- the visible tail and older history ---------------------------------------------------


def say(text: str) -> MessageEntry:
    return MessageEntry(message=Message(role="user", content=[TextPart(text=text)]))


def test_load_tail_starts_at_the_last_clear_or_summary(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    old = [say(f"old {i}") for i in range(5)]
    summary = say("summary")
    after = [say("after 1"), say("after 2")]
    write(
        path,
        header(),
        *old,
        ClearMarker(),
        say("between"),
        summary,
        CompactBoundary(summary_id=summary.id),
        *after,
    )
    tail = load_tail(path)
    texts = [e.message.text for e in tail.entries if isinstance(e, MessageEntry)]
    assert texts == ["summary", "after 1", "after 2"]
    assert isinstance(tail.entries[0], Header)
    assert tail.tail_offset > 0
    # the same view as a full load
    assert [m.text for m in project(tail.entries)] == [m.text for m in project(load(path).entries)]

    write(path, ClearMarker(), say("fresh"))
    texts = [e.message.text for e in load_tail(path).entries if isinstance(e, MessageEntry)]
    assert texts == ["fresh"]


def test_load_tail_of_an_uncompacted_session_is_everything(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    entries = [header(), *(say(str(i)) for i in range(30))]
    write(path, *entries)
    assert load_tail(path).entries == entries
    assert load_tail(path).tail_offset == len(dump_entry(entries[0])) + 1


def test_load_tail_reads_across_block_boundaries(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    big = [say("x" * 400_000 + str(i)) for i in range(6)]  # > 2 MB: several 1 MB blocks
    write(path, header(), *big)
    assert load_tail(path).entries[1:] == big


def test_read_older_pages_backwards(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    old = [say(f"old {i}") for i in range(7)]
    write(path, header(), *old, ClearMarker(), say("new"))
    tail = load_tail(path)
    page, before = read_older(path, tail.tail_offset, 3)
    assert [e.message.text for e in page] == ["old 4", "old 5", "old 6"]
    page, before = read_older(path, before, 3)
    assert [e.message.text for e in page] == ["old 1", "old 2", "old 3"]
    page, before = read_older(path, before, 3)
    assert [e.message.text for e in page] == ["old 0"] and before == 0


def test_a_writer_seals_a_torn_tail_so_new_lines_stay_whole(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, header(), say("before the crash"))
    with path.open("ab") as f:
        f.write(b'{"id":"x","ts":"t","type":"message","message":{"ro')
    write(path, say("after the restart"))
    for loaded in (load(path), load_tail(path)):
        texts = [e.message.text for e in loaded.entries if isinstance(e, MessageEntry)]
        assert texts == ["before the crash", "after the restart"]
        assert any("torn" in w for w in loaded.warnings)
        assert any(isinstance(e, TornLineRepair) for e in loaded.entries)
    assert b'"message":{"ro\n' in path.read_bytes()  # the fragment's bytes were kept


def test_corrupt_line_inside_the_tail_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, header(), say("a"))
    with path.open("ab") as f:
        f.write(b"not json\n")
    write(path, say("b"))
    with pytest.raises(TranscriptError, match="corrupt line at byte"):
        load_tail(path)
