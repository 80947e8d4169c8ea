"""Issue 40 item 6 through the real `peri -p`: a hook's `"continue": false` (PreToolUse,
PostToolUse, UserPromptSubmit) ends the turn with its `stopReason` shown; the transcript stays
whole (every tool_use answered) and the session resumes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Peri

STOP = '{"continue": false, "stopReason": "tests are red: fix them first"}'


def hook_settings(peri: Peri, event: str, body: str) -> None:
    script = peri.home / f"{event}.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    folder = peri.home / ".peri"
    folder.mkdir(parents=True, exist_ok=True)
    hooks = {event: [{"matcher": "*", "hooks": [{"type": "command", "command": str(script)}]}]}
    (folder / "settings.json").write_text(json.dumps({"hooks": hooks}))


def bash(command: str) -> dict[str, Any]:
    return {"name": "Bash", "input": {"command": command}}


def messages(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [e["message"] for e in lines if "message" in e and isinstance(e["message"], dict)]


def answered(history: list[dict[str, Any]]) -> None:
    """Every tool_use is answered by a tool_result in the next message."""
    for i, message in enumerate(history):
        if message["role"] != "assistant" or not isinstance(message["content"], list):
            continue
        uses = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
        if not uses:
            continue
        following = history[i + 1]["content"]
        results = [b["tool_use_id"] for b in following if b.get("type") == "tool_result"]
        assert results == uses


def test_a_pre_tool_use_continue_false_ends_the_turn_and_the_session_resumes(peri: Peri) -> None:
    hook_settings(peri, "PreToolUse", f"if grep -q stopme; then echo '{STOP}'; fi\n")
    calls = [bash("touch before.txt"), bash("touch stopme.txt"), bash("touch after.txt")]
    peri.server.set_script([{"tool_calls": calls}, {"text": "resumed fine"}])
    result = peri.json("-p", "go", "--permission-mode", "bypass")
    assert result["is_error"] and result["error"] == "tests are red: fix them first"
    assert len(peri.model_calls()) == 1  # the model is not called again
    assert (peri.workspace / "before.txt").exists()  # decided before the hook stopped: ran
    assert not (peri.workspace / "stopme.txt").exists()
    assert not (peri.workspace / "after.txt").exists()
    history = messages(peri.transcript(result["session_id"]))
    answered(history)
    results = [b for b in history[-1]["content"] if b.get("type") == "tool_result"]
    assert [r.get("is_error", False) for r in results] == [False, True, True]
    assert "tests are red" in json.dumps(results[1])
    hook_settings(peri, "PreToolUse", "exit 0\n")
    again = peri.json("-p", "go on", "-r", result["session_id"])
    assert not again["is_error"] and again["result"] == "resumed fine"
    sent = peri.model_calls()[-1]["messages"]
    answered(sent)


def test_a_post_tool_use_continue_false_keeps_the_result_and_ends_the_turn(peri: Peri) -> None:
    hook_settings(peri, "PostToolUse", f"cat >/dev/null; echo '{STOP}'\n")
    peri.server.set_script([{"tool_calls": [bash("echo it-ran > ran.txt")]}, {"text": "never"}])
    done = peri.run("-p", "go", "--permission-mode", "bypass")
    assert done.returncode == 1
    assert "tests are red: fix them first" in done.stderr and "Traceback" not in done.stderr
    assert (peri.workspace / "ran.txt").read_text() == "it-ran\n"
    assert len(peri.model_calls()) == 1


def test_a_user_prompt_submit_continue_false_sends_nothing(peri: Peri) -> None:
    hook_settings(peri, "UserPromptSubmit", f"cat >/dev/null; echo '{STOP}'\n")
    peri.server.set_script([{"text": "never"}])
    result = peri.json("-p", "go")
    assert result["is_error"] and result["error"] == "tests are red: fix them first"
    assert peri.model_calls() == []
