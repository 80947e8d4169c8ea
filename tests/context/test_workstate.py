"""The pure working state: the task list, files changed, commands run and what still fails, read
from the transcript and rendered within its budget (issue 38)."""

from __future__ import annotations

from typing import Any

from peri_cli.base.messages import Message, ToolUsePart, tool_result, user_text
from peri_cli.context.plan_mode import PLAN_KEY, approved_plan
from peri_cli.context.todos import TODOS_KEY, latest_todos, parse_todos
from peri_cli.context.worklog import (
    DURATIONS_KEY,
    WORK_LOG_KEY,
    FileChange,
    still_failing,
    work_log,
)
from peri_cli.context.workstate import (
    MIN_TOKENS,
    WorkingState,
    budget_for,
    state_tokens,
    working_state_text,
)
from peri_cli.session.transcript import MessageEntry
from tests.builders import assistant, counter, entry

TODOS = [
    {"content": "Fix the parser", "status": "completed", "activeForm": "Fixing the parser"},
    {"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"},
    {"content": "Update the docs", "status": "pending", "activeForm": "Updating the docs"},
]


def call(i: str, name: str, **input: Any) -> MessageEntry:
    return entry(assistant(ToolUsePart(id=i, name=name, input=input)))


def answer(i: str, text: str, *, is_error: bool = False, ms: int | None = 1200) -> MessageEntry:
    """A call's result; `ms` None: the call was refused before it ran (no duration)."""
    durations = {} if ms is None else {i: ms}
    return MessageEntry.model_validate(
        {
            "message": Message(role="user", content=[tool_result(i, text, is_error=is_error)]),
            DURATIONS_KEY: durations,
        }
    )


def bash(i: str, command: str, text: str, ms: int = 1200, **kw: Any) -> list[MessageEntry]:
    return [call(i, "Bash", command=command, **kw), answer(i, text, ms=ms)]


def session() -> list[MessageEntry]:
    return [
        entry(user_text("fix the parser; tests run with make check")),
        call("t1", "TodoWrite", todos=TODOS[:1]),
        answer("t1", "ok"),
        call("w1", "Write", file_path="new.py", content="x\n"),
        answer("w1", "Created new.py (2 bytes, 1 lines)."),
        call("e1", "Edit", file_path="parser.py", old_string="a", new_string="b"),
        answer("e1", "Edited parser.py"),
        call("e2", "Edit", file_path="new.py", old_string="x", new_string="y"),
        answer("e2", "Edited new.py"),
        *bash("b1", "make check", "FAILED test_parse\nExit code: 2", ms=3400),
        *bash("b2", "pytest -q tests/test_lexer.py", "1 failed\nE  assert 1 == 2\nExit code: 1"),
        *bash("b3", "make check", "all passed", ms=2100),
        call("t2", "TodoWrite", todos=TODOS),
        answer("t2", "ok"),
        call("t3", "TodoWrite", todos="not a list"),
        answer("t3", "Invalid input", is_error=True),
    ]


def test_the_latest_successful_todo_write_is_the_list() -> None:
    todos = latest_todos(session())
    assert todos is not None
    assert [t.status for t in todos] == ["completed", "in_progress", "pending"]
    assert latest_todos(session()[:1]) is None


def test_a_carried_list_counts_as_the_latest() -> None:
    carried = MessageEntry.model_validate({"message": user_text("ws"), TODOS_KEY: TODOS[1:]})
    todos = latest_todos([*session(), carried])
    assert todos is not None and [t.content for t in todos] == ["Run the tests", "Update the docs"]


def test_files_newest_first_and_a_new_file_stays_created() -> None:
    log = work_log(session())
    assert [(f.path, f.action) for f in log.files] == [
        ("new.py", "created"),
        ("parser.py", "edited"),
    ]


def test_commands_with_exit_status_and_duration() -> None:
    runs = work_log(session()).runs
    assert [(r.command, r.status, r.duration_ms) for r in runs] == [
        ("make check", "exit 2", 3400),
        ("pytest -q tests/test_lexer.py", "exit 1", 1200),
        ("make check", "exit 0", 2100),
    ]


def test_a_command_that_failed_then_passed_is_not_failing() -> None:
    failing = still_failing(work_log(session()).runs)
    assert failing is not None and failing.command == "pytest -q tests/test_lexer.py"
    fixed = [*session(), *bash("b4", "pytest -q tests/test_lexer.py", "1 passed")]
    assert still_failing(work_log(fixed).runs) is None


def test_a_refused_call_never_ran() -> None:
    refused = [call("x", "Bash", command="rm -rf /"), answer("x", "denied", is_error=True, ms=None)]
    assert work_log([*session(), *refused]).runs[-1].command == "make check"


def test_the_failing_tail_is_at_most_20_lines() -> None:
    out = "\n".join(f"line {n}" for n in range(100)) + "\nExit code: 1"
    failing = still_failing(work_log(bash("b", "make test", out)).runs)
    assert failing is not None
    assert len(failing.tail.splitlines()) == 20 and failing.tail.endswith("Exit code: 1")


def test_a_later_compaction_keeps_what_an_earlier_one_carried() -> None:
    record = work_log(session()).record()
    carried = MessageEntry.model_validate({"message": user_text("ws"), WORK_LOG_KEY: record})
    later = [carried, *bash("b9", "ls", "a b"), call("e9", "Edit", file_path="z.py")]
    later.append(answer("e9", "Edited z.py"))
    log = work_log(later)
    assert [f.path for f in log.files] == ["z.py", "new.py", "parser.py"]
    assert [r.command for r in log.runs][-2:] == ["make check", "ls"]
    failing = still_failing(log.runs)
    assert failing is not None and failing.command == "pytest -q tests/test_lexer.py"


def state(**kw: Any) -> WorkingState:
    entries = session()
    fields: dict[str, Any] = {
        "todos": latest_todos(entries),
        "log": work_log(entries),
        "file_states": {"new.py": "1 line", "parser.py": "deleted"},
        "mode": "acceptEdits",
    }
    return WorkingState(**(fields | kw))


def test_the_text_carries_every_kind_newest_first() -> None:
    text = working_state_text(state(), budget=budget_for(200_000), count=counter().count_text)
    assert "[~] Run the tests" in text and "Now: Running the tests" in text
    assert "- new.py: created, 1 line" in text and "- parser.py: edited, deleted" in text
    assert text.index("new.py: created") < text.index("parser.py: edited")
    assert "`make check` → exit 0, 2.1 s" in text
    assert text.index("`make check` → exit 0") < text.index("`make check` → exit 2")
    assert "Still failing (no later run of it succeeded): `pytest -q tests/test_lexer.py`" in text
    assert "E  assert 1 == 2" in text
    assert "Permission mode: acceptEdits" in text
    assert "Approved plan" not in text  # no plan approved: the part is left out


def test_it_is_deterministic() -> None:
    one = working_state_text(state(), budget=2_000, count=counter().count_text)
    assert one == working_state_text(state(), budget=2_000, count=counter().count_text)


def test_budget_is_five_percent_and_at_least_1500() -> None:
    assert budget_for(200_000) == 10_000
    assert budget_for(24_000) == MIN_TOKENS == 1_500


def test_every_part_keeps_to_its_cap_and_the_whole_to_the_budget() -> None:
    count = counter().count_text
    many = [
        {"content": f"task {n} " + "x" * 400, "status": "pending", "activeForm": f"doing {n}"}
        for n in range(100)
    ]
    entries = session()
    for n in range(300):
        entries += bash(f"c{n}", f"step {n} " + "y" * 200, "ok")
        entries += [call(f"f{n}", "Edit", file_path=f"src/m{n}.py"), answer(f"f{n}", "Edited")]
    plan = "\n".join(f"{n}. do part {n} " + "z" * 200 for n in range(500))
    big = WorkingState(todos=parse_todos(many), plan=plan, log=work_log(entries), mode="default")
    text = working_state_text(big, budget=MIN_TOKENS, count=count)
    assert count(text) <= MIN_TOKENS
    plan_text = text[text.index("Approved plan:") : text.index("Files this session")]
    assert count(plan_text) <= 0.4 * MIN_TOKENS
    assert "src/m299.py" in text and "src/m0.py" not in text  # newest first, oldest left out
    assert "left out to fit" in text


def test_nothing_to_keep_is_empty() -> None:
    assert working_state_text(WorkingState(), budget=2_000, count=counter().count_text) == ""


def test_context_counts_the_working_state_and_the_task_list() -> None:
    count = counter().count_message
    kept = MessageEntry.model_validate(
        {
            "message": user_text("<working_state>x</working_state>"),
            "origin": "compact_working_state",
        }
    )
    entries = [*session(), kept]
    calls = [
        e for e in entries if e.message.tool_uses and e.message.tool_uses[0].name == "TodoWrite"
    ]
    assert state_tokens(entries, count) > count(kept.message) + sum(count(e.message) for e in calls)
    assert state_tokens(session()[:1], count) == 0


def test_a_command_that_worked_after_failing_outlasts_other_successes() -> None:
    entries = session()  # `make check` failed, then passed
    for n in range(60):
        entries += bash(f"s{n}", f"echo step {n}", "ok")
    text = working_state_text(
        state(log=work_log(entries)), budget=MIN_TOKENS, count=counter().count_text
    )
    assert "`make check` → exit 0" in text
    assert "`echo step 59` → exit 0" in text and "`echo step 0` → exit 0" not in text
    carried = MessageEntry.model_validate(
        {"message": user_text("ws"), WORK_LOG_KEY: work_log(entries).record()}
    )
    again = [carried, *(x for n in range(60) for x in bash(f"t{n}", f"echo again {n}", "ok"))]
    text = working_state_text(
        state(log=work_log(again)), budget=MIN_TOKENS, count=counter().count_text
    )
    assert "`make check` → exit 0" in text  # still first at the next compaction


def test_the_approved_plan_is_kept_and_carried_past_the_next_compaction() -> None:
    kept_plan = "1. add x.py\n2. run the tests"
    entries = [
        call("p1", "ExitPlanMode", plan="an older plan the user sent back"),
        answer("p1", "keep planning: smaller steps", is_error=True),
        call("p2", "ExitPlanMode", plan=kept_plan),
        answer("p2", "approved"),
    ]
    assert approved_plan(entries) == kept_plan
    carried = MessageEntry.model_validate({"message": user_text("state"), PLAN_KEY: kept_plan})
    assert approved_plan([carried, *bash("b1", "make", "ok")]) == kept_plan
    assert approved_plan(entries[:2]) is None
    text = working_state_text(state(plan=kept_plan), budget=1500, count=counter().count_text)
    assert kept_plan.splitlines()[0] in text


def test_a_file_deleted_by_a_command_that_succeeded_is_listed() -> None:
    entries = [
        call("w1", "Write", file_path="scratch.txt", content="x\n"),
        answer("w1", "Created scratch.txt (2 bytes, 1 lines)."),
        *bash("b1", "rm scratch.txt old.txt", "", ms=10),
        *bash("b2", "rm kept.txt", "rm: cannot remove\nExit code: 1"),
    ]
    log = work_log(entries, removes=lambda c: c.split()[1:])
    assert [(f.path, f.action) for f in log.files] == [
        ("old.txt", "deleted"),
        ("scratch.txt", "deleted"),
    ]
    text = working_state_text(
        state(log=log, file_states={"scratch.txt": "deleted", "old.txt": "3 lines"}),
        budget=MIN_TOKENS,
        count=counter().count_text,
    )
    assert "- scratch.txt: deleted\n" in text
    assert "- old.txt: deleted, there again now: 3 lines" in text
    assert "kept.txt" not in text.split("Shell commands")[0]


def test_files_a_subagent_changed_join_where_its_call_stands() -> None:
    entries = [
        call("e1", "Edit", file_path="a.py", old_string="x", new_string="y"),
        answer("e1", "Edited a.py"),
        call("ag", "Agent", prompt="fix b", subagent_type="general-purpose"),
        answer("ag", "[SubAgent 1a2b3c4d (general-purpose) finished.]"),
    ]
    by = "SubAgent 1a2b3c4d (general-purpose)"
    child = {"ag": [FileChange("b.py", "created", by), FileChange("a.py", "edited", by)]}
    log = work_log(entries, subagent_files=child)
    assert log.files == [FileChange("a.py", "edited", by), FileChange("b.py", "created", by)]
    carried = work_log(
        [MessageEntry.model_validate({"message": user_text("ws"), WORK_LOG_KEY: log.record()})]
    )
    assert carried.files == log.files
    text = working_state_text(
        state(log=log, file_states={"a.py": "4 lines", "b.py": "2 lines"}),
        budget=MIN_TOKENS,
        count=counter().count_text,
    )
    assert f"- a.py: edited by {by}, 4 lines" in text
