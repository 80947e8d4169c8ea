"""Issue 39 end to end: the hook fields Claude Code's plugins use, through the real `peri -p`
(a Python hook that denies with only a `systemMessage`, an `if` condition, an async rewake)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Peri


def user_settings(peri: Peri, hooks: dict[str, Any]) -> None:
    folder = peri.home / ".peri"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"hooks": hooks}))


def bash(command: str) -> dict[str, object]:
    return {"name": "Bash", "input": {"command": command}}


def requests(peri: Peri) -> list[str]:
    return [json.dumps(body) for body in peri.model_calls()]


def write(path: Path, text: str) -> str:
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


DENY_PY = """\
import json, sys
data = json.load(sys.stdin)
if "rm -rf" in data["tool_input"].get("command", ""):
    print(json.dumps({
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"},
        "systemMessage": "**[no-rm-rf]** Move files to ./trash instead of deleting them.",
    }))
sys.exit(0)
"""


def test_a_python_hook_that_denies_with_only_a_system_message_tells_the_model_why(
    peri: Peri,
) -> None:
    (peri.workspace / "keep").mkdir()
    hook = write(peri.home / "deny.py", DENY_PY)
    command = f"python3 {hook}"  # as plugins write it
    user_settings(peri, {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]})
    peri.server.set_script([{"tool_calls": [bash("rm -rf keep")]}, {"text": "ok"}])
    result = peri.json("-p", "clean up", "--permission-mode", "bypass")
    assert not result["is_error"], result
    assert (peri.workspace / "keep").exists()
    last = requests(peri)[-1]
    assert "Move files to ./trash instead of deleting them." in last
    assert "[no-rm-rf]" in last


def test_an_if_condition_runs_the_hook_for_git_commit_and_not_for_git_status(peri: Peri) -> None:
    marker = peri.home / "ran.log"
    hook = write(peri.home / "mark.sh", f'#!/bin/sh\ncat >> "{marker}"\necho >> "{marker}"\n')
    user_settings(
        peri,
        {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": hook, "if": "Bash(git commit:*)"}],
                }
            ]
        },
    )
    peri.server.set_script(
        [{"tool_calls": [bash("git status"), bash("git commit -m x")]}, {"text": "ok"}]
    )
    result = peri.json("-p", "commit", "--permission-mode", "bypass")
    assert not result["is_error"], result
    seen = [json.loads(line) for line in marker.read_text().splitlines() if line.strip()]
    assert [s["tool_input"]["command"] for s in seen] == ["git commit -m x"]


def test_an_async_rewake_hooks_message_reaches_the_next_model_request(peri: Peri) -> None:
    # The hook waits for a file the model's SECOND call makes: run in line, it would hold the
    # first call until its timeout, and no finding would reach the model.
    review = write(
        peri.home / "review.sh",
        "#!/bin/sh\nwhile [ ! -f go ]; do sleep 0.05; done\n"
        "echo 'FINDING-42: secret in config.py' >&2\nexit 2\n",
    )
    user_settings(
        peri,
        {
            "PostToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {
                            "type": "command",
                            "command": review,
                            "if": "Bash(echo:*)",
                            "timeout": 30,
                            "asyncRewake": True,
                            "rewakeMessage": "Background security review of the commit:",
                            "rewakeSummary": "Commit security review found issues",
                        }
                    ],
                }
            ]
        },
    )
    peri.server.set_script(
        [
            {"tool_calls": [bash("echo committed")]},
            {"tool_calls": [bash("touch go")]},
            {"text": "done"},
            {"text": "acknowledged the finding"},
        ]
    )
    done = peri.run("-p", "commit it", "--permission-mode", "bypass", "--output-format", "json")
    result = json.loads(done.stdout)
    assert not result["is_error"], result
    sent = requests(peri)
    assert len(sent) == 4
    assert "FINDING-42" not in sent[1]  # the first call's round did not wait for the hook
    assert "Background security review of the commit:" in sent[3]
    assert "FINDING-42: secret in config.py" in sent[3]
    assert result["result"] == "acknowledged the finding"
    assert "Commit security review found issues" in done.stderr


def test_a_stop_rewake_hook_that_always_finds_something_wakes_the_agent_5_times(
    peri: Peri,
) -> None:
    nag = write(peri.home / "nag.sh", "#!/bin/sh\necho 'NAG: look again' >&2\nexit 2\n")
    hook = {"type": "command", "command": nag, "asyncRewake": True, "rewakeMessage": "Review:"}
    user_settings(peri, {"Stop": [{"hooks": [hook]}]})
    peri.server.set_script([{"text": f"reply {n}"} for n in range(10)])
    done = peri.run("-p", "hello", "--output-format", "json")
    result = json.loads(done.stdout)
    assert not result["is_error"], result
    sent = requests(peri)
    assert len(sent) == 6  # the prompt's turn, then 5 wakes; the 6th finding waits
    assert all("NAG: look again" in body for body in sent[1:])
    assert "woke the agent 5 times in a row" in done.stderr
