"""Checkpoints and /rewind through the real loop, tools and session store (scripted provider)."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from peri_cli.base.messages import TextPart, user_text
from peri_cli.context.projection import project
from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.sdk.runtime import Runtime
from peri_cli.session.checkpoints import Checkpointer, CheckpointError
from peri_cli.session.rewind import apply_code, plan_code, prompts, record, rewind_conversation
from peri_cli.session.transcript import (
    CheckpointEntry,
    CompactBoundary,
    MessageEntry,
    RewindMarker,
)
from tests.tui.harness import make_runtime


def _write(path: str, content: str) -> ScriptedReply:
    call = ScriptedCall("Write", {"file_path": path, "content": content})
    return ScriptedReply(tool_calls=[call])


def _edit(path: str, old: str, new: str) -> ScriptedReply:
    call = ScriptedCall("Edit", {"file_path": path, "old_string": old, "new_string": new})
    return ScriptedReply(tool_calls=[call])


async def _prompt(runtime: Runtime, text: str) -> None:
    assert runtime.agent is not None
    async for _ in runtime.agent.run(text):
        pass


def _user_texts(runtime: Runtime) -> list[str]:
    assert runtime.agent is not None
    view = project(runtime.agent.session.entries)
    return [
        "".join(p.text for p in m.content if isinstance(p, TextPart))
        for m in view
        if m.role == "user" and not m.tool_results
    ]


async def _four_prompts(tmp_path: Path) -> Runtime:
    replies = [
        _write("a.txt", "one\n"),
        ScriptedReply(text="wrote a"),
        _edit("a.txt", "one", "two"),
        ScriptedReply(text="edited a"),
        _write("b.txt", "new b\n"),
        ScriptedReply(text="wrote b"),
        ScriptedReply(text="just talk"),
    ]
    runtime = make_runtime(tmp_path, replies, mode="bypass")
    (runtime.workspace / "b.txt").write_text("old b\n")
    for text in ("first", "second", "third", "fourth"):
        await _prompt(runtime, text)
    return runtime


async def test_writes_keep_the_previous_bytes_deduplicated_and_recorded(tmp_path: Path) -> None:
    runtime = await _four_prompts(tmp_path)
    assert runtime.session is not None
    entries = runtime.session.entries
    checkpoints = [e for e in entries if isinstance(e, CheckpointEntry)]
    befores = [e for e in checkpoints if e.phase == "before"]
    assert [Path(e.files[0].path).name for e in befores] == ["a.txt", "a.txt", "b.txt"]
    assert befores[0].files[0].sha is None  # a.txt did not exist: nothing kept
    kept = sorted(p.read_bytes() for p in (runtime.session.dir / "checkpoints").iterdir())
    assert kept == [b"old b\n", b"one\n"]
    assert (runtime.workspace / "a.txt").read_text() == "two\n"


async def test_rewind_to_prompt_two_of_four_restores_code_and_hides_the_rest(
    tmp_path: Path,
) -> None:
    runtime = await _four_prompts(tmp_path)
    session = runtime.session
    assert session is not None
    listed = prompts(record(session))
    assert [p.text for p in listed] == ["fourth", "third", "second", "first"]
    second = listed[2]
    plan = await _plan(runtime, second.id)
    assert sorted(f.path.name for f in plan.files) == ["a.txt", "b.txt"]
    assert not plan.conflicts
    result = apply_code(Checkpointer(session), plan)
    session.append(*result.records)
    assert (runtime.workspace / "a.txt").read_text() == "one\n"
    assert (runtime.workspace / "b.txt").read_text() == "old b\n"
    rewind_conversation(session, second.id)
    assert _user_texts(runtime) == ["first"]
    await _prompt(runtime, "new second")
    assert _user_texts(runtime) == ["first", "new second"]
    # the lines stay in the file
    texts = [e.message.text for e in record(session) if isinstance(e, MessageEntry)]
    assert "third" in texts and "fourth" in texts
    # resume sees the same view
    session_id = session.id
    runtime.close()
    resumed = make_runtime(tmp_path, new_session=False)
    resumed.start_existing(session_id, fork=False)
    assert _user_texts(resumed) == ["first", "new second"]
    assert [p.text for p in prompts(record(resumed.session))] == ["new second", "first"]  # type: ignore[arg-type]


async def _plan(runtime: Runtime, prompt_id: str):  # type: ignore[no-untyped-def]
    assert runtime.session is not None
    return plan_code(record(runtime.session), prompt_id)


async def test_a_file_changed_outside_peri_is_refused_unless_overwritten(tmp_path: Path) -> None:
    runtime = await _four_prompts(tmp_path)
    session = runtime.session
    assert session is not None
    (runtime.workspace / "a.txt").write_text("mine\n")
    second = prompts(record(session))[2]
    plan = await _plan(runtime, second.id)
    assert [f.path.name for f in plan.conflicts] == ["a.txt"]
    result = apply_code(Checkpointer(session), plan)
    assert [p.name for p in result.restored] == ["b.txt"]
    assert [f.path.name for f in result.skipped] == ["a.txt"]
    assert (runtime.workspace / "a.txt").read_text() == "mine\n"
    session.append(*result.records)
    plan = await _plan(runtime, second.id)
    result = apply_code(Checkpointer(session), plan, overwrite=True)
    assert (runtime.workspace / "a.txt").read_text() == "one\n"


async def test_code_rewind_to_the_first_prompt_removes_a_created_file(tmp_path: Path) -> None:
    runtime = await _four_prompts(tmp_path)
    assert runtime.session is not None
    first = prompts(record(runtime.session))[-1]
    result = apply_code(Checkpointer(runtime.session), await _plan(runtime, first.id))
    runtime.session.append(*result.records)
    assert not (runtime.workspace / "a.txt").exists()
    # the restore is recorded as Peri's own change: planning again finds no outside change
    again = await _plan(runtime, first.id)
    assert not again.conflicts


async def test_a_fork_keeps_checkpoints_usable(tmp_path: Path) -> None:
    runtime = await _four_prompts(tmp_path)
    assert runtime.session is not None
    parent = runtime.session.id
    runtime.start_existing(parent, fork=True)
    child = runtime.session
    assert child is not None and child.id != parent
    second = prompts(record(child))[2]
    result = apply_code(Checkpointer(child), plan_code(record(child), second.id))
    assert not result.failed
    assert (runtime.workspace / "a.txt").read_text() == "one\n"


async def test_rewind_reaches_past_a_clear_and_a_full_compaction_after_resume(
    tmp_path: Path,
) -> None:
    runtime = make_runtime(tmp_path)
    session = runtime.session
    assert session is not None
    for text in ("p1", "p2"):
        await _prompt(runtime, text)
    summary = MessageEntry.model_validate(
        {"message": user_text("summary of p1 and p2"), "origin": "compact_summary"}
    )
    session.append(summary, CompactBoundary(summary_id=summary.id))
    await _prompt(runtime, "p3")
    session.clear()
    await _prompt(runtime, "p4")
    assert _user_texts(runtime) == ["p4"]
    listed = prompts(record(session))
    assert [p.text for p in listed] == ["p4", "p3", "p2", "p1"]
    rewind_conversation(session, listed[2].id)  # back to before p2: p1 is seen again
    assert _user_texts(runtime) == ["p1"]
    session_id = session.id
    runtime.close()
    resumed = make_runtime(tmp_path, new_session=False)
    resumed.start_existing(session_id, fork=False)
    assert _user_texts(resumed) == ["p1"]
    assert resumed.session is not None
    assert any(isinstance(e, RewindMarker) for e in resumed.session.entries)


# --- adversarial cases (review of issue 15) ------------------------------------------------------


async def test_restore_never_writes_through_a_folder_made_a_symlink_since(tmp_path: Path) -> None:
    replies = [
        _write("build/conf", "new\n"),
        ScriptedReply(text="wrote"),
        _write("build/more", "x"),
    ]
    runtime = make_runtime(tmp_path, [*replies, ScriptedReply(text="ok")], mode="bypass")
    session = runtime.session
    assert session is not None
    (runtime.workspace / "build").mkdir()
    (runtime.workspace / "build" / "conf").write_text("old\n")
    await _prompt(runtime, "first")
    await _prompt(runtime, "second")
    # the folder is swapped for a link to a folder outside the workspace with the same names
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "conf").write_text("new\n")
    (outside / "more").write_text("x")
    for name in ("conf", "more"):
        (runtime.workspace / "build" / name).unlink()
    (runtime.workspace / "build").rmdir()
    (runtime.workspace / "build").symlink_to(outside)
    first = prompts(record(session))[-1]
    result = apply_code(Checkpointer(session), await _plan(runtime, first.id), overwrite=True)
    assert result.restored == []
    assert all("not followed" in why for _, why in result.failed), result.failed
    assert (outside / "conf").read_text() == "new\n" and (outside / "more").exists()


async def test_a_file_whose_bytes_cannot_be_kept_is_not_restored(tmp_path: Path) -> None:
    runtime = make_runtime(
        tmp_path, [_write("new.py", "work\n"), ScriptedReply(text="ok")], mode="bypass"
    )
    session = runtime.session
    assert session is not None
    await _prompt(runtime, "make it")
    first = prompts(record(session))[-1]
    store = Checkpointer(session).dir
    shutil.rmtree(store, ignore_errors=True)
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text("")  # the store cannot take the current bytes (as on a full disk)
    result = apply_code(Checkpointer(session), await _plan(runtime, first.id))
    assert result.restored == [] and "not touched" in result.failed[0][1], result.failed
    assert (runtime.workspace / "new.py").read_text() == "work\n"


async def test_checkpoints_are_private_and_names_must_be_hashes(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [_edit("secret.env", "a", "b"), ScriptedReply(text="ok")])
    session = runtime.session
    assert session is not None
    secret = runtime.workspace / "secret.env"
    secret.write_text("a\n")
    secret.chmod(0o600)
    runtime.agent.policy.mode = "bypass"  # type: ignore[union-attr]
    await _prompt(runtime, "edit it")
    keeper = Checkpointer(session)
    (blob,) = list(keeper.dir.iterdir())
    assert stat.S_IMODE(keeper.dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(blob.stat().st_mode) == 0o600
    with pytest.raises(CheckpointError, match="not a sha256"):
        keeper.read_blob("../../../../etc/passwd")


def test_the_picker_counts_changed_files_without_reading_them(tmp_path: Path) -> None:
    from peri_cli.session.rewind import changed_counts
    from peri_cli.session.transcript import FileState

    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    one = MessageEntry(message=user_text("one"))
    two = MessageEntry(message=user_text("two"))
    entries = [
        one,
        CheckpointEntry(phase="before", files=[FileState(path=a)], call_id="c1"),
        two,
        CheckpointEntry(phase="before", files=[FileState(path=a), FileState(path=b)], call_id="c2"),
    ]
    assert changed_counts(entries, [one.id, two.id]) == {one.id: 2, two.id: 2}


async def test_a_subagents_write_is_rewound_and_its_cost_is_counted(tmp_path: Path) -> None:
    """Issue 15: code rewind restores what Peri's SubAgents changed too; /cost counts them."""
    from peri_cli.session.costs import session_costs

    scripts = {
        "delegate": [
            ScriptedReply(
                tool_calls=[
                    ScriptedCall("Agent", {"prompt": "child: write", "description": "writer"})
                ]
            ),
            ScriptedReply(text="The child wrote it."),
        ],
        "child: write": [_write("notes.txt", "by the child\n"), ScriptedReply(text="Written.")],
    }

    def by_first_message(request: Any) -> ScriptedReply:
        first = request.messages[0].text if request.messages else ""
        for key, replies in scripts.items():
            if key in first and replies:
                return replies.pop(0)
        return ScriptedReply(text="ok")

    runtime = make_runtime(tmp_path, [by_first_message] * 10, mode="bypass")  # type: ignore[list-item]
    session = runtime.session
    assert session is not None
    await _prompt(runtime, "delegate the note")
    assert (runtime.workspace / "notes.txt").read_text() == "by the child\n"
    entries = record(session)
    costs = session_costs(entries, session.dir, "claude-sonnet-4-5")
    assert costs.subagent_count == 1 and costs.subagents.usage.output_tokens > 0
    prompt = prompts(entries)[0]
    result = apply_code(Checkpointer(session), plan_code(entries, prompt.id))
    assert [p.name for p in result.restored] == ["notes.txt"]
    assert not (runtime.workspace / "notes.txt").exists()
