import json
import time
from pathlib import Path

import pytest

from peri_cli.base.messages import Message, TextPart, user_text
from peri_cli.session.store import REFUSED_DIR, SessionNotFound, SessionStore, workspace_key
from peri_cli.session.transcript import Interruption, MessageEntry, Snapshot
from peri_cli.session.transcript_file import SessionLocked, TranscriptError, load


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    workspace = tmp_path / "my project"
    workspace.mkdir()
    return SessionStore(tmp_path / "home", workspace)


def say(text: str, role: str = "user") -> MessageEntry:
    return MessageEntry(message=Message(role=role, content=[TextPart(text=text)]))  # type: ignore[arg-type]


def test_workspace_key_is_readable_and_distinct(tmp_path: Path) -> None:
    a = workspace_key(tmp_path / "a-b")
    b = workspace_key(tmp_path / "a_b")
    assert a != b
    assert a.split("-")[-2] == "b" and len(a.split("-")[-1]) == 8


def test_create_writes_header_under_the_workspace_folder(store: SessionStore) -> None:
    session = store.create(Snapshot(system="frozen bytes"))
    assert session.path.parent == store.root
    assert session.path.name == f"{session.id}.jsonl"
    assert load(session.path).header.snapshot.system == "frozen bytes"
    session.close()


def test_open_loads_history_and_continue_picks_latest(store: SessionStore) -> None:
    first = store.create(Snapshot(system="s"))
    first.append(say("first prompt"), say("first answer", "assistant"))
    first.close()
    time.sleep(0.01)
    second = store.create(Snapshot(system="s"))
    second.append(say("second prompt"), say("second answer", "assistant"))
    second.close()
    assert store.latest() == second.id
    time.sleep(0.01)  # (`updated` has millisecond resolution: a tie is no order)
    reopened = store.open(first.id)
    reopened.append(say("more"))
    reopened.close()
    assert store.latest() == first.id
    again = store.open(first.id)
    assert [e.message.text for e in again.entries if isinstance(e, MessageEntry)] == [
        "first prompt",
        "first answer",
        "more",
    ]
    again.close()


def test_open_refuses_a_session_open_elsewhere(store: SessionStore) -> None:
    session = store.create(Snapshot(system="s"))
    with pytest.raises(SessionLocked):
        store.open(session.id)
    session.close()
    store.open(session.id).close()


def test_resume_by_unique_prefix(store: SessionStore) -> None:
    session = store.create(Snapshot(system="s"))
    session.close()
    assert store.resolve(session.id[:8]) == session.id
    assert store.resolve(session.id) == session.id
    with pytest.raises(SessionNotFound, match="too short"):
        store.resolve(session.id[:7])
    with pytest.raises(SessionNotFound, match="no session"):
        store.resolve("ffffffff-0000")


def test_ambiguous_prefix_is_refused(store: SessionStore) -> None:
    ids = []
    for _ in range(3):
        s = store.create(Snapshot(system="s"))
        ids.append(s.id)
        s.close()
    common = ids[0][:8]
    if all(i.startswith(common) for i in ids):  # same millisecond prefix (very likely)
        with pytest.raises(SessionNotFound, match="matches 3 sessions"):
            store.resolve(common)


def test_fork_copies_history_and_leaves_parent_byte_identical(store: SessionStore) -> None:
    parent = store.create(Snapshot(system="frozen"))
    parent.append(say("hello"), say("hi there", "assistant"))
    parent.close()
    before = parent.path.read_bytes()
    child = store.fork(parent.id)
    child.append(say("only in the child"))
    child.close()
    assert parent.path.read_bytes() == before
    assert child.id != parent.id
    loaded = load(child.path)
    assert loaded.header.parent is not None and loaded.header.parent.session_id == parent.id
    assert loaded.header.snapshot.system == "frozen"
    texts = [e.message.text for e in loaded.entries if isinstance(e, MessageEntry)]
    assert texts == ["hello", "hi there", "only in the child"]


def test_fork_works_while_the_parent_is_open(store: SessionStore) -> None:
    parent = store.create(Snapshot(system="s"))
    parent.append(say("x"))
    child = store.fork(parent.id)
    assert child.id != parent.id
    child.close()
    parent.close()


def test_list_newest_first_with_title_count_and_parent(store: SessionStore) -> None:
    a = store.create(Snapshot(system="s"))
    a.append(
        MessageEntry(message=user_text("  Fix   the\nbug in parser  ")), say("ok", "assistant")
    )
    a.close()
    b = store.fork(a.id)
    b.close()
    infos = store.list()
    assert [i.id for i in infos] == [b.id, a.id]
    assert infos[1].title == "Fix the bug in parser"
    assert infos[1].message_count == 2
    assert infos[0].parent == a.id and infos[1].parent is None


def test_list_rebuilds_a_missing_sidecar_from_the_file(store: SessionStore) -> None:
    s = store.create(Snapshot(system="s"))
    s.append(say("title here"))
    s.close()
    s.path.with_suffix(".meta.json").unlink()
    (info,) = store.list()
    assert info.title == "title here" and info.message_count == 1


def test_list_of_an_unknown_workspace_is_empty(tmp_path: Path) -> None:
    assert SessionStore(tmp_path / "nohome", tmp_path).list() == []


def test_fork_of_a_damaged_parent_keeps_every_readable_line(store: SessionStore) -> None:
    parent = store.create(Snapshot(system="s"))
    parent.append(say("one"))
    parent.close()
    with parent.path.open("ab") as f:
        f.write(b"garbage in the middle\n")
    reopened_text = parent.path.read_bytes()
    with parent.path.open("ab") as f:
        f.write(MessageEntry(message=user_text("two")).model_dump_json().encode() + b"\n")
    with pytest.raises(TranscriptError):
        store.open(parent.id)
    child = store.fork(parent.id)
    assert [e.message.text for e in child.entries if isinstance(e, MessageEntry)] == ["one", "two"]
    assert any("unreadable" in w for w in child.warnings)
    child.close()
    assert parent.path.read_bytes().startswith(reopened_text)


def test_open_uses_the_sidecar_and_shows_older_history_on_demand(store: SessionStore) -> None:
    s = store.create(Snapshot(system="s"))
    s.append(*(say(f"m{i}") for i in range(5)))
    s.clear()
    s.append(say("visible"))
    s.close()
    again = store.open(s.id)
    assert [e.message.text for e in again.entries if isinstance(e, MessageEntry)] == ["visible"]
    assert again.info.message_count == 6
    older, _ = again.older(again.tail_offset, limit=10)
    assert [e.message.text for e in older if isinstance(e, MessageEntry)] == [
        f"m{i}" for i in range(5)
    ]
    again.close()


def test_sessions_that_never_got_a_message_are_not_listed(store: SessionStore) -> None:
    empty = store.create(Snapshot(system="s"))
    empty.close()
    used = store.create(Snapshot(system="s"))
    used.append(say("hello"), say("hi", "assistant"))
    used.close()
    assert [i.id for i in store.list()] == [used.id]
    assert store.latest() == used.id
    assert store.resolve(empty.id) == empty.id  # still there, still resumable by id


def test_delete_takes_everything_kept_with_the_session(store: SessionStore) -> None:
    """Issue 37 item 7: a command's saved output lives in the session's folder and goes with it,
    as do SubAgent transcripts and checkpoints; another session's files stay."""
    session = store.create(Snapshot(system="s"))
    session.append(say("make a lot of output"))
    other = store.create(Snapshot(system="s"))
    other.append(say("keep me"))
    other.close()
    for rel in ("outputs/0123456789abcdef0123456789abcdef.txt", "agents/child.jsonl"):
        (session.dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (session.dir / rel).write_text("kept with the session")
    moved = store.peri_home / REFUSED_DIR / session.id / ".mcp.json"  # the sandbox's check's
    moved.parent.mkdir(parents=True)
    moved.write_text("planted")
    other_moved = store.peri_home / REFUSED_DIR / other.id / ".mcp.json"
    other_moved.parent.mkdir(parents=True)
    other_moved.write_text("planted too")
    with pytest.raises(SessionLocked):  # not while a process has it open
        store.delete(session.id)
    assert session.dir.is_dir()
    session.close()
    store.delete(session.id)
    assert not session.dir.exists() and not session.path.exists()
    assert not moved.parent.exists() and other_moved.read_text() == "planted too"
    left = {p.name for p in store.root.iterdir()} - {
        p.name for p in store.root.glob(f"{other.id}*")
    }
    assert left == {f"{session.id}.lock"}  # the lock file, never unlinked (it may be in use)
    assert [s.id for s in store.list()] == [other.id]
    with pytest.raises(SessionNotFound):
        store.delete(session.id)


def test_continue_skips_sessions_that_never_got_an_answer(store: SessionStore) -> None:
    """Issue 37 item 11: a run that failed before any reply (no key, a refused key) is listed,
    marked as unanswered, and `-c` passes over it to the session that did the work."""
    work = store.create(Snapshot(system="s"))
    work.append(say("the real work"), say("done with it", "assistant"))
    work.close()
    time.sleep(0.01)
    failed = store.create(Snapshot(system="s"))
    failed.append(say("a prompt that never got a reply"))
    failed.close()
    infos = store.list()
    assert [(i.id, i.answered) for i in infos] == [(failed.id, False), (work.id, True)]
    assert store.latest() == work.id
    failed.path.with_suffix(".meta.json").unlink()  # rebuilt from the file: the same answer
    assert [(i.id, i.answered) for i in store.list()] == [(failed.id, False), (work.id, True)]
    assert store.latest() == work.id


def test_a_session_answered_later_is_continued(store: SessionStore) -> None:
    s = store.create(Snapshot(system="s"))
    s.append(say("first try fails"))
    assert store.latest() is None
    s.append(say("second try", "user"), say("an answer at last", "assistant"))
    s.close()
    assert store.latest() == s.id
    assert store.list()[0].answered


def test_a_sidecar_from_before_the_answered_flag_is_rebuilt(store: SessionStore) -> None:
    s = store.create(Snapshot(system="s"))
    s.append(say("no reply yet"))
    s.close()
    meta = s.path.with_suffix(".meta.json")
    old = json.loads(meta.read_text())
    old.pop("answered")
    meta.write_text(json.dumps(old))
    (info,) = store.list()
    assert info.answered is False and store.latest() is None


@pytest.mark.parametrize(
    ("interruption", "answered"),
    [
        (Interruption(reason="failed", text="[401]", replied=False), False),
        (Interruption(reason="cancelled", text="[stopped]", replied=False), False),
        (Interruption(reason="cancelled", text="[stopped mid-tools]", replied=True), True),
        (Interruption(reason="failed", text="[cut mid-reply]", replied=True), True),
        (Interruption(reason="cancelled", text="[written before `replied`]"), True),
        (Interruption(reason="failed", text="[written before `replied`]"), False),
    ],
)
def test_a_turn_stopped_after_the_reply_began_counts_as_an_answer(
    store: SessionStore, interruption: Interruption, answered: bool
) -> None:
    """The user stopped a first turn whose tools were running: that session is theirs to
    continue, though no reply was committed."""
    s = store.create(Snapshot(system="s"))
    s.append(say("a first prompt"), interruption)
    s.close()
    assert store.list()[0].answered is answered
    s.path.with_suffix(".meta.json").unlink()
    assert store.list()[0].answered is answered
    assert store.latest() == (s.id if answered else None)
