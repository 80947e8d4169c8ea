"""Issue 10, "Headless tells the truth": denials, JSON errors, causal stream order, stdin, ids."""

from __future__ import annotations

import json
import subprocess
import sys

from peri_cli.session.transcript import MessageEntry
from peri_cli.session.transcript_file import load
from tests.e2e.conftest import Peri, texts


def _run(peri: Peri, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "peri_cli", *args],
        cwd=peri.workspace,
        env=peri.env(),
        input=None if stdin is None else stdin.decode(),
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_json_lists_permission_denials_and_stderr_says_how_to_allow(peri: Peri) -> None:
    peri.server.set_script(
        [
            {
                "tool_calls": [
                    {"name": "Bash", "input": {"command": "rm -rf build"}},
                    {"name": "Write", "input": {"file_path": "a.txt", "content": "x"}},
                ]
            },
            {"text": "I could not do it."},
        ]
    )
    done = peri.run("-p", "clean up", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    denials = result["permission_denials"]
    assert [d["tool_name"] for d in denials] == ["Bash", "Write"]
    assert denials[0]["tool_input"] == {"command": "rm -rf build"}
    assert all(d["tool_use_id"] and d["reason"] for d in denials)
    (line,) = [ln for ln in done.stderr.splitlines() if "denied" in ln]
    assert "2 tool calls" in line and "'default'" in line and "--permission-mode bypass" in line
    assert not (peri.workspace / "a.txt").exists()


def test_a_denied_edit_alone_points_at_accept_edits(peri: Peri) -> None:
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Write", "input": {"file_path": "a.txt", "content": "x"}}]},
            {"text": "no"},
        ]
    )
    done = peri.run("-p", "write", "--output-format", "json")
    assert "--permission-mode accept-edits" in done.stderr
    assert json.loads(done.stdout)["permission_denials"][0]["tool_name"] == "Write"


def test_errors_are_json_on_stdout_too(peri: Peri) -> None:
    # no key at all
    env_free = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}
    peri.extra_env.update(env_free)
    done = peri.run("-p", "hi", "--output-format", "json")
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["is_error"] is True and "API key" in result["error"]
    assert "API key" in done.stderr
    # a key the server refuses
    peri.extra_env.clear()
    peri.server.set_script([{"status": 401}])
    done = peri.run("-p", "hi", "--output-format", "stream-json")
    assert done.returncode == 1
    last = json.loads(done.stdout.splitlines()[-1])
    assert last["type"] == "result" and last["is_error"] is True and "401" in last["error"]


def test_stream_json_is_in_causal_order(peri: Peri) -> None:
    (peri.workspace / "a.txt").write_text("alpha\n")
    peri.server.set_script(
        [
            {
                "text": "Reading, then writing.",
                "tool_calls": [
                    {"name": "Read", "input": {"file_path": "a.txt"}},
                    {"name": "Write", "input": {"file_path": "b.txt", "content": "x"}},
                ],
            },
            {"text": "done"},
        ]
    )
    done = peri.run("-p", "go", "--output-format", "stream-json")
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [(e["type"], e.get("name") or e.get("tool_use_id", "")) for e in events]
    first_assistant = next(i for i, e in enumerate(events) if e["type"] == "assistant")
    ids = [
        b["id"] for b in events[first_assistant]["message"]["content"] if b["type"] == "tool_use"
    ]
    for call_id in ids:  # the message holding the call, then its tool_use line, then its result
        use = next(
            i for i, e in enumerate(events) if e["type"] == "tool_use" and e["id"] == call_id
        )
        result = next(
            i
            for i, e in enumerate(events)
            if e["type"] == "tool_result" and e["tool_use_id"] == call_id
        )
        assert first_assistant < use < result, kinds
    denied = next(e for e in events if e["type"] == "tool_result" and e["name"] == "Write")
    assert denied["is_error"] is True  # the denied call got its tool_use and tool_result lines
    assert events[-1]["type"] == "result"


def test_prompt_from_stdin_and_appended_stdin(peri: Peri) -> None:
    peri.server.set_script([{"text": "one"}, {"text": "two"}])
    done = _run(peri, "-p", stdin=b"explain x\n")
    assert done.returncode == 0, done.stderr
    assert texts(peri.model_calls()[-1])[-1].strip() == "explain x"
    done = _run(peri, "-p", "summarize", stdin=b"line 1\nline 2\n")
    assert done.returncode == 0, done.stderr
    assert texts(peri.model_calls()[-1])[-1] == "summarize\n\nline 1\nline 2\n"


def test_huge_stdin_is_capped_with_a_note(peri: Peri) -> None:
    peri.server.set_script([{"text": "ok"}])
    done = _run(peri, "-p", "summarize", stdin=b"x" * (2 * 1024 * 1024))
    assert done.returncode == 0, done.stderr
    sent = texts(peri.model_calls()[-1])[-1]
    assert sent.startswith("summarize\n\nxxx") and "piped input cut" in sent
    assert len(sent) < 300_000


def test_open_but_silent_stdin_does_not_hang_a_run_with_a_prompt(peri: Peri) -> None:
    peri.server.set_script([{"text": "answered"}])
    proc = subprocess.Popen(
        [sys.executable, "-m", "peri_cli", "-p", "hi"],
        cwd=peri.workspace,
        env=peri.env(),
        stdin=subprocess.PIPE,  # open, never written, never closed
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        out = proc.stdout.readline()  # stdin stays open: reading stdout to its end would wait
        assert proc.wait(timeout=30) == 0
        assert out.strip() == "answered"
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.kill()


def test_piped_stdin_to_the_tui_is_a_clear_usage_error(peri: Peri) -> None:
    done = _run(peri, stdin=b"x\n")
    assert done.returncode == 2
    assert "-p" in done.stderr and "Traceback" not in done.stderr


def test_session_ids_started_together_differ_in_their_first_8_characters(peri: Peri) -> None:
    peri.server.set_script([{"text": "a"}, {"text": "b"}, {"text": "c"}])
    first = peri.json("-p", "one")["session_id"]
    second = peri.json("-p", "two")["session_id"]
    assert first[:8] != second[:8]
    assert first[14] == "4"  # a UUIDv4: random, not a timestamp
    resumed = peri.json("-r", first[:8], "-p", "three")
    assert resumed["session_id"] == first
    entries = load(peri.transcript(first)).entries
    ids = [e.id for e in entries if isinstance(e, MessageEntry)]
    assert ids == sorted(ids)  # message ids stay time-ordered


def test_a_usage_less_openai_stream_is_estimated_and_marked(peri: Peri) -> None:
    """llama.cpp's server and some Ollama versions stream no usage chunk: Peri counts it."""
    peri.provider = "openai"
    peri.server.set_script([{"text": "an answer of several words", "no_usage": True}])
    result = peri.json("-p", "a question " * 50)
    usage = result["usage"]
    assert usage["estimated"] is True
    assert usage["input_tokens"] > 50 and usage["output_tokens"] > 0
    entries = load(peri.transcript(result["session_id"])).entries
    (reply,) = [e for e in entries if isinstance(e, MessageEntry) and e.message.role == "assistant"]
    assert reply.usage_estimated and reply.usage is not None and reply.usage.input_tokens > 50


def test_reported_usage_is_not_marked_estimated(peri: Peri) -> None:
    peri.server.set_script([{"text": "ok"}])
    assert "estimated" not in peri.json("-p", "hi")["usage"]
