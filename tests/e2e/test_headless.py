"""`peri -p` end to end: the real process, the real SDKs, the loopback fake server."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from peri_cli.session.transcript import MessageEntry
from peri_cli.session.transcript_file import load
from tests.e2e.conftest import API_KEY, Peri, system_text, texts


def frozen_of(peri: Peri, session_id: str) -> str:
    return load(peri.transcript(session_id)).header.snapshot.system


def assert_frozen_everywhere(peri: Peri, frozen: str) -> None:
    for body in peri.model_calls():
        sent = system_text(body)
        assert sent == frozen or sent.startswith(frozen + "\n\n"), "frozen prefix changed"


def test_multi_step_tool_loop(peri: Peri, provider: str) -> None:
    peri.provider = provider
    (peri.workspace / "app.py").write_text("def greet():\n    return 'helo'\n")
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Read", "input": {"file_path": "app.py"}}]},
            {
                "tool_calls": [
                    {
                        "name": "Edit",
                        "input": {
                            "file_path": "app.py",
                            "old_string": "helo",
                            "new_string": "hello",
                        },
                    }
                ]
            },
            {
                "tool_calls": [
                    {
                        "name": "Bash",
                        "input": {"command": "python3 -c 'import app; print(app.greet())'"},
                    },
                    {"name": "Grep", "input": {"pattern": "hello", "output_mode": "count"}},
                ]
            },
            {"text": "Fixed the typo; greet() now returns hello."},
        ]
    )
    result = peri.json("-p", "fix the typo", "--permission-mode", "bypass")
    assert result["is_error"] is False
    assert result["result"] == "Fixed the typo; greet() now returns hello."
    assert result["num_turns"] == 4
    assert (peri.workspace / "app.py").read_text() == "def greet():\n    return 'hello'\n"
    calls = peri.model_calls()
    assert len(calls) == 4
    last = json.dumps(calls[-1])
    assert "hello" in last and "app.py:1" in last  # Bash output and Grep count came back
    assert result["usage"]["input_tokens"] > 0 and result["usage"]["output_tokens"] > 0
    assert_frozen_everywhere(peri, frozen_of(peri, result["session_id"]))


def test_text_and_stream_json_output(peri: Peri) -> None:
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]},
            {
                "text": "Nothing here.",
                "usage": {"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": 90},
            },
        ]
    )
    done = peri.run("-p", "list", "--output-format", "stream-json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "system" and events[0]["subtype"] == "init" and events[0]["session_id"]
    assert {"assistant", "tool_use", "tool_result"} <= set(kinds)
    assert kinds[-1] == "result" and events[-1]["result"] == "Nothing here."
    assert events[-1]["usage"]["cache_read_input_tokens"] == 90

    peri.server.set_script([{"text": "plain answer"}])
    done = peri.run("-p", "hello")
    assert (done.returncode, done.stdout) == (0, "plain answer\n")


def test_resume_continue_and_fork(peri: Peri) -> None:
    peri.server.set_script([{"text": "first answer"}])
    first = peri.json("-p", "remember the word banana")
    sid = first["session_id"]
    frozen = frozen_of(peri, sid)
    # a changed guide only affects new sessions
    (peri.workspace / "AGENTS.md").write_text("# New rules that appeared later\n")

    peri.server.set_script([{"text": "second answer"}])
    second = peri.json("-r", sid[:8], "-p", "what was the word?")
    assert second["session_id"] == sid
    assert texts(peri.model_calls()[-1]) == [
        "remember the word banana",
        "first answer",
        "what was the word?",
    ]

    parent_bytes = peri.transcript(sid).read_bytes()
    peri.server.set_script([{"text": "forked answer"}])
    forked = peri.json("-c", "--fork-session", "-p", "in the fork")
    assert forked["session_id"] != sid
    assert peri.transcript(sid).read_bytes() == parent_bytes
    assert texts(peri.model_calls()[-1])[:3] == texts(peri.model_calls()[-2])[:3]
    assert load(peri.transcript(forked["session_id"])).header.parent.session_id == sid

    assert_frozen_everywhere(peri, frozen)
    assert "New rules" not in frozen
    peri.server.set_script([{"text": "fresh"}])
    fresh = peri.json("-p", "new session")
    assert "New rules that appeared later" in frozen_of(peri, fresh["session_id"])

    listing = json.loads(peri.run("sessions", "--json").stdout)
    assert [s["id"] for s in listing][:3] == [fresh["session_id"], forked["session_id"], sid]
    assert listing[2]["title"] == "remember the word banana"
    assert listing[1]["parent"] == sid and listing[2]["message_count"] == 4


def test_clear_in_headless_mode(peri: Peri) -> None:
    peri.server.set_script([{"text": "a1"}])
    sid = peri.json("-p", "old question")["session_id"]
    done = peri.run("-r", sid, "-p", "/clear")
    assert done.returncode == 0 and "Cleared" in done.stdout
    peri.server.set_script([{"text": "a2"}])
    peri.json("-r", sid, "-p", "new question")
    assert texts(peri.model_calls()[-1]) == ["new question"]
    old = [e for e in load(peri.transcript(sid)).entries if isinstance(e, MessageEntry)]
    assert old[0].message.text == "old question"  # still in the file


def test_unknown_slash_word_goes_to_the_model(peri: Peri) -> None:
    peri.server.set_script([{"text": "it is a file"}])
    assert peri.json("-p", "/etc/hosts what is it")["result"] == "it is a file"
    assert texts(peri.model_calls()[-1]) == ["/etc/hosts what is it"]


def _write_script() -> list[dict]:
    return [
        {"tool_calls": [{"name": "Write", "input": {"file_path": "out.txt", "content": "x"}}]},
        {"text": "done"},
    ]


def test_permission_denials_per_mode(peri: Peri, tmp_path: Path) -> None:
    for mode, allowed in [
        ("default", False),
        ("plan", False),
        ("accept-edits", True),
        ("bypass", True),
    ]:
        (peri.workspace / "out.txt").unlink(missing_ok=True)
        peri.server.set_script(_write_script())
        result = peri.json("-p", "write", "--permission-mode", mode)
        assert (peri.workspace / "out.txt").exists() is allowed, mode
        last = json.dumps(peri.model_calls()[-1])
        assert ("Permission denied" in last) is (not allowed), mode
        assert result["is_error"] is False

    peri.server.set_script(
        [{"tool_calls": [{"name": "Bash", "input": {"command": "touch ran"}}]}, {"text": "ok"}]
    )
    peri.json("-p", "run", "--permission-mode", "accept-edits")
    assert not (peri.workspace / "ran").exists()

    outside = tmp_path / "outside"
    outside.mkdir()
    (peri.workspace / "escape").symlink_to(outside)
    peri.server.set_script(
        [
            {
                "tool_calls": [
                    {"name": "Write", "input": {"file_path": "escape/pwned.txt", "content": "x"}}
                ]
            },
            {"text": "ok"},
        ]
    )
    peri.json("-p", "write through the link", "--permission-mode", "accept-edits")
    assert not (outside / "pwned.txt").exists()
    assert "outside the workspace" in json.dumps(peri.model_calls()[-1])


def test_overloaded_twice_then_success(peri: Peri, provider: str) -> None:
    peri.provider = provider
    peri.server.set_script([{"status": 529, "times": 2, "retry_after": 0}, {"text": "finally"}])
    result = peri.json("-p", "hi")
    assert result["result"] == "finally" and result["is_error"] is False
    statuses = [r["status"] for r in peri.server.requests]
    assert statuses == [529, 529, 200]


def test_stream_cut_midway_is_retried_not_committed(peri: Peri, provider: str) -> None:
    peri.provider = provider
    peri.server.set_script(
        [{"text": "a long partial reply " * 5, "cut_after": 4}, {"text": "complete reply"}]
    )
    result = peri.json("-p", "hi")
    assert result["result"] == "complete reply"
    assistants = [
        e.message.text
        for e in load(peri.transcript(result["session_id"])).entries
        if isinstance(e, MessageEntry) and e.message.role == "assistant"
    ]
    assert assistants == ["complete reply"]


def test_provider_error_exits_1_and_never_leaks_the_key(peri: Peri) -> None:
    peri.server.set_script([{"status": 401}])
    done = peri.run("-p", "hi")
    assert done.returncode == 1
    assert "API key" in done.stderr and API_KEY not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
    for path in (peri.home / ".peri").rglob("*"):
        if path.is_file():
            assert API_KEY not in path.read_text(errors="replace")


def test_malformed_arguments_and_unknown_tool(peri: Peri, provider: str) -> None:
    peri.provider = provider
    peri.server.set_script(
        [
            {
                "tool_calls": [
                    {"name": "Read", "raw_arguments": "{not json"},
                    {"name": "Teleport", "input": {"to": "mars"}},
                ]
            },
            {"text": "recovered"},
        ]
    )
    result = peri.json("-p", "go")
    assert result["result"] == "recovered" and result["is_error"] is False
    last = json.dumps(peri.model_calls()[-1])
    assert "not valid JSON" in last and "Unknown tool 'Teleport'" in last


def test_max_turns_exit_1(peri: Peri) -> None:
    peri.server.set_script([{"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]}] * 3)
    done = peri.run("-p", "loop", "--max-turns", "2")
    assert done.returncode == 1 and "max-turns" in done.stderr
    assert len(peri.model_calls()) == 2


def test_kill_9_during_bash_then_clean_resume(peri: Peri) -> None:
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "touch started; sleep 60"}}]},
        ]
    )
    proc = peri.popen("-p", "run it", "--permission-mode", "bypass")
    deadline = time.monotonic() + 30
    while not (peri.workspace / "started").exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    peri.server.set_script([{"text": "resumed fine"}])
    # by id: a session killed before its first reply was committed never got an answer, and
    # `-c` passes over those (issue 37 item 11)
    (killed,) = peri.sessions_dir.glob("*.jsonl")
    result = peri.json("-r", killed.stem, "-p", "continue")
    assert result["result"] == "resumed fine"
    body = peri.model_calls()[-1]
    assert "tool_use" not in json.dumps(body["messages"])  # no half turn was committed
    assert texts(body) == ["run it", "continue"]


def test_second_process_on_the_same_session_is_refused(peri: Peri) -> None:
    peri.server.set_script([{"text": "x", "delay": 0.3}])
    sid = peri.json("-p", "start")["session_id"]
    peri.server.set_script([{"text": "slow " * 20, "delay": 0.2}])
    proc = peri.popen("-r", sid, "-p", "long one")
    deadline = time.monotonic() + 20
    while len(peri.model_calls()) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    done = peri.run("-r", sid, "-p", "interleave")
    proc.wait(60)
    assert done.returncode == 1 and "open in another peri process" in done.stderr


def test_usage_errors_exit_2_with_one_line(peri: Peri) -> None:
    for args in (
        ["--bogus"],
        ["--permission-mode", "yolo"],
        ["-r", "nosuchsessionid", "-p", "x"],
        ["--max-turns", "0", "-p", "x"],
        ["--fork-session", "-p", "x"],
    ):
        done = peri.run(*args)
        assert done.returncode == 2, args
        assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("peri: "), args
    assert peri.run("--version").stdout.startswith("peri ")
    assert "--permission-mode" in peri.run("--help").stdout
    assert peri.run("sessions").stdout.strip() == "No sessions in this workspace yet."


def test_sigint_cancels_the_turn_and_stops_the_command(peri: Peri) -> None:
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "echo $$ > pid; sleep 60"}}]},
        ]
    )
    proc = peri.popen("-p", "run it", "--permission-mode", "bypass")
    pid_file = peri.workspace / "pid"
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
        time.sleep(0.05)
    shell = int(pid_file.read_text())
    proc.send_signal(signal.SIGINT)
    assert proc.wait(20) == 1
    assert "cancelled" in proc.stderr.read()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{shell}").exists() and "Z" not in _state(shell):
        assert time.monotonic() < deadline, "the command outlived the cancelled turn"
        time.sleep(0.05)
    entries = load(peri.transcript(_only_session(peri)))
    roles = [e.message.role for e in entries.entries if isinstance(e, MessageEntry)]
    assert roles == ["user"]


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][:1]
    except OSError:
        return "Z"


def _only_session(peri: Peri) -> str:
    (path,) = peri.sessions_dir.glob("*.jsonl")
    return path.stem


def test_settings_problems_are_one_clear_line(peri: Peri) -> None:
    settings = peri.workspace / ".peri" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"compact": {"protected_turns": "three"}}')
    done = peri.run("-p", "hi")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1
    assert "settings.json" in done.stderr and "compact.protected_turns" in done.stderr

    settings.write_text('{"colour": "blue"}')
    peri.server.set_script([{"text": "fine"}])
    done = peri.run("-p", "hi")
    assert done.returncode == 0 and done.stdout == "fine\n"
    assert "colour" in done.stderr and "warning" in done.stderr


def test_corrupt_session_is_refused_clearly_and_forks_from_its_good_lines(peri: Peri) -> None:
    peri.server.set_script([{"text": "a1"}])
    sid = peri.json("-p", "first")["session_id"]
    path = peri.transcript(sid)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + b"{broken json\n" + b"".join(lines[1:]))
    done = peri.run("-r", sid, "-p", "again")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "corrupt line at byte" in done.stderr and "--fork-session" in done.stderr
    peri.server.set_script([{"text": "a2"}])
    forked = peri.json("-r", sid, "--fork-session", "-p", "again")
    assert forked["result"] == "a2"
    assert texts(peri.model_calls()[-1]) == ["first", "a1", "again"]
