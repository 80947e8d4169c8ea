"""Issue 37 item 11: `peri -c` continues the session that did the work, not a later run that
failed before any reply (a refused key); `peri sessions` lists that run, marked."""

from __future__ import annotations

import json

from tests.e2e.conftest import Peri, texts


def test_continue_passes_over_a_run_that_never_got_an_answer(peri: Peri) -> None:
    peri.server.set_script([{"text": "the work is done"}])
    work = peri.json("-p", "the real work")
    assert not work["is_error"]
    peri.server.set_script([{"status": 401}])
    failed = peri.run("-p", "a run with a bad key")
    assert failed.returncode == 1
    peri.server.set_script([{"text": "carrying on"}])
    again = peri.json("-c", "-p", "go on")
    assert again["session_id"] == work["session_id"]
    assert texts(peri.model_calls()[-1]) == ["the real work", "the work is done", "go on"]
    listed = json.loads(peri.run("sessions", "--json").stdout)
    assert [(s["title"], s["answered"]) for s in listed] == [
        ("the real work", True),
        ("a run with a bad key", False),
    ]
    lines = peri.run("sessions").stdout.splitlines()
    assert "(no answer)" in lines[1] and "(no answer)" not in lines[0]


def test_continue_with_only_unanswered_sessions_says_what_to_do(peri: Peri) -> None:
    peri.server.set_script([{"status": 401}])
    assert peri.run("-p", "a run with a bad key").returncode == 1
    done = peri.run("-c", "-p", "go on")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "peri: error: no session to continue in this workspace: 1 session never got an "
        "answer (pick it with peri -r)"
    )
