"""Issue 9 (hardening) end to end: the real `peri -p` process against the fake model server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from peri_cli.session.transcript import Interruption, MessageEntry, TornLineRepair
from peri_cli.session.transcript_file import load
from tests.e2e.conftest import Peri, texts


def test_item1_five_parallel_edits_to_one_file_all_land(peri: Peri) -> None:
    (peri.workspace / "f.py").write_text("".join(f"v{i} = {i}\n" for i in range(5)))
    edits = [
        {
            "name": "Edit",
            "input": {
                "file_path": "f.py",
                "old_string": f"v{i} = {i}",
                "new_string": f"v{i} = {i * 10}",
            },
        }
        for i in range(5)
    ]
    peri.server.set_script([{"tool_calls": edits}, {"text": "done"}])
    result = peri.json("-p", "edit", "--permission-mode", "accept-edits")
    assert not result["is_error"]
    assert (peri.workspace / "f.py").read_text() == "".join(f"v{i} = {i * 10}\n" for i in range(5))


def test_item2_whitespace_block_does_not_break_the_session(peri: Peri) -> None:
    (peri.workspace / "a.txt").write_text("alpha\n")
    peri.server.set_script(
        [
            {"text": "\n\n", "tool_calls": [{"name": "Read", "input": {"file_path": "a.txt"}}]},
            {"text": "read it"},
            {"text": "still fine"},
            {"text": "and forked"},
        ]
    )
    first = peri.json("-p", "read a.txt")
    assert not first["is_error"], first
    assert not peri.json("-c", "-p", "next")["is_error"]
    assert not peri.json("-c", "--fork-session", "-p", "fork")["is_error"]
    assert all(r["status"] == 200 for r in peri.server.requests)  # nothing was refused with 400


def test_item2_blank_prompt_with_nothing_to_continue_is_a_usage_error(peri: Peri) -> None:
    peri.server.set_script([{"text": "hello"}])
    peri.json("-p", "hi")
    done = peri.run("-c", "-p", "   ")
    assert done.returncode == 2 and "needs a prompt" in done.stderr
    assert len(peri.model_calls()) == 1  # no request for a blank prompt
    (path,) = peri.sessions_dir.glob("*.jsonl")
    users = [e for e in load(path).entries if isinstance(e, MessageEntry)]
    assert [m.message.role for m in users] == ["user", "assistant"]


def test_item8_non_utf8_prompt_and_surrogates_in_tool_input(peri: Peri) -> None:
    peri.server.set_script(
        [
            {
                "tool_calls": [
                    {
                        "name": "Write",
                        "raw_arguments": '{"file_path": "x.txt", "content": "a\\ud800b"}',
                    }
                ]
            },
            {"text": "ok \ud800"},
        ]
    )
    env = peri.env()
    prompt = b"bad bytes \xff\xfe here"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "peri_cli",
            "-p",
            prompt,
            "--output-format",
            "json",
            "--permission-mode",
            "accept-edits",
        ],
        cwd=peri.workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert "Traceback" not in done.stderr.decode()
    assert not (peri.workspace / "x.txt").exists()
    last = json.dumps(peri.model_calls()[-1])
    assert "lone UTF-16 surrogate" in last
    entries = load(peri.transcript(result["session_id"])).entries
    assert any(
        "bad bytes \ufffd\ufffd here" in e.message.text
        for e in entries
        if isinstance(e, MessageEntry)
    )


def test_item9_nul_byte_in_a_write_path(peri: Peri) -> None:
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Write", "input": {"file_path": "a\u0000b", "content": "x"}}]},
            {"text": "ok"},
        ]
    )
    result = peri.json("-p", "write", "--permission-mode", "accept-edits")
    assert not result["is_error"] and result["result"] == "ok"
    assert "not run" in json.dumps(peri.model_calls()[-1])


@pytest.mark.parametrize("bad", ["/etc/passwd", "../../../evil", "..", "0123456789abcdef/../x"])
def test_item11_a_session_id_is_never_a_path(peri: Peri, bad: str) -> None:
    done = peri.run("-r", bad, "-p", "hi")
    assert done.returncode == 2 and "not a session id" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (peri.home / "evil.jsonl").exists() and not list(peri.home.rglob("evil*"))


def test_item12_peri_home_that_is_a_file_or_read_only(peri: Peri, tmp_path: Path) -> None:
    blocker = tmp_path / "home-file"
    blocker.write_text("not a folder")
    peri.extra_env["PERI_HOME"] = str(blocker)
    done = peri.run("-p", "hi", "--output-format", "json")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "PERI_HOME" in done.stderr
    result = json.loads(done.stdout)
    assert result["is_error"] is True and "PERI_HOME" in result["error"]
    if os.geteuid() != 0:  # root writes anywhere: the read-only case needs an ordinary user
        readonly = tmp_path / "ro"
        readonly.mkdir(mode=0o500)
        peri.extra_env["PERI_HOME"] = str(readonly)
        done = peri.run("-p", "hi")
        assert done.returncode == 1 and "PERI_HOME" in done.stderr


def test_item18_a_garbage_line_is_sealed_on_the_first_resume(peri: Peri) -> None:
    peri.server.set_script([{"text": "one"}, {"text": "two"}, {"text": "three"}])
    sid = peri.json("-p", "first")["session_id"]
    path = peri.transcript(sid)
    with path.open("ab") as f:
        f.write(b"garbage another process wrote\n")
    second = peri.run("-r", sid, "-p", "second")
    assert second.returncode == 0, second.stderr
    third = peri.run("-r", sid, "-p", "third")
    assert third.returncode == 0, third.stderr
    entries = load(path).entries
    assert any(isinstance(e, TornLineRepair) for e in entries)
    assert "first" in texts(peri.model_calls()[-1]) and "second" in texts(peri.model_calls()[-1])


def test_sigint_during_a_tool_records_the_interruption(peri: Peri) -> None:
    peri.server.set_script(
        [{"tool_calls": [{"name": "Bash", "input": {"command": "sleep 30"}}]}, {"text": "ok"}]
    )
    proc = peri.popen(
        "-p", "sleepy tool", "--permission-mode", "bypass", "--output-format", "stream-json"
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line).get("type") == "tool_use":
            break
    proc.send_signal(2)
    proc.wait(timeout=30)
    sid = next(p.stem for p in peri.sessions_dir.glob("*.jsonl"))
    notes = [e for e in load(peri.transcript(sid)).entries if isinstance(e, Interruption)]
    assert len(notes) == 1 and "Bash: sleep 30" in notes[0].text
    done = peri.json("-c", "-p", "fix the add bug now")
    assert not done["is_error"]
    sent = texts(peri.model_calls()[-1])
    assert (
        sent[0] == "sleepy tool" and "interrupted" in sent[1] and sent[2] == "fix the add bug now"
    )
