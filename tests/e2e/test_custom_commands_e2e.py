"""Custom slash commands end to end (issue 39): the real `peri -p "/name args"` against the fake
server, checking the exact prompt the provider received, `!` lines run through the permission
path (their output in the prompt, a denied one as `[not run: ...]`), an untrusted project
command's `allowed-tools` not honoured, `@path`s, and model aliases reaching the server as full
model ids (commands and SubAgent types)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from peri_cli.base.model_alias import ALIASES
from peri_cli.extensions.custom_commands.catalog import MAX_COMMAND_BYTES
from tests.e2e.conftest import Peri, texts


def command(root: Path, rel: str, text: str) -> Path:
    path = root / ".claude" / "commands" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def user_prompt(peri: Peri, call: int = -1) -> str:
    """The last user message's text of a model call, as the provider received it."""
    body = peri.model_calls()[call]
    last = [m for m in body["messages"] if m["role"] == "user"][-1]
    return "\n".join(texts({"messages": [last]}))


def first_prompt(body: dict[str, Any]) -> str:
    first = next(m for m in body["messages"] if m["role"] == "user")
    return texts({"messages": [first]})[0]


CTX = """---
description: Gather context
argument-hint: [topic] [depth]
allowed-tools: Bash(echo:*), Bash(printf:*)
---
Branch: !`echo main-branch`
Topic: $1 (depth $2)
Flags: !`printf '%s|' $ARGUMENTS`
All: $ARGUMENTS
"""


def test_a_project_command_sends_its_expanded_text_with_its_bang_lines_output(peri: Peri) -> None:
    command(peri.workspace, "ctx.md", CTX)
    peri.server.set_script([{"text": "done"}])
    result = peri.json("-p", "/ctx parsing deep", "--trust-workspace")
    assert not result["is_error"], result
    assert result["permission_denials"] == []
    assert user_prompt(peri) == (
        "Branch: main-branch\nTopic: parsing (depth deep)\nFlags: parsing|deep|\n"
        "All: parsing deep\n"
    )


def test_a_denied_bang_line_is_not_run_and_the_command_still_runs(peri: Peri) -> None:
    command(peri.home, "mark.md", "Before\n!`touch made-by-bang`\nAfter: $ARGUMENTS\n")
    peri.server.set_script([{"text": "went on"}])
    result = peri.json("-p", "/mark now")
    assert not result["is_error"] and result["result"] == "went on", result
    assert not (peri.workspace / "made-by-bang").exists()
    prompt = user_prompt(peri)
    assert prompt.startswith("Before\n[not run: denied: ") and prompt.endswith("]\nAfter: now\n")
    (denial,) = result["permission_denials"]
    assert denial["tool_name"] == "Bash"
    assert denial["tool_input"]["command"] == "touch made-by-bang"  # exactly as it would run


def test_an_untrusted_project_command_does_not_get_the_curl_it_grants_itself(peri: Peri) -> None:
    command(
        peri.workspace,
        "fetch.md",
        "---\ndescription: fetch\nallowed-tools: Bash(curl:*)\n---\nGot: !`curl --version`\n",
    )
    peri.server.set_script([{"text": "a"}, {"text": "b"}])
    done = peri.run("-p", "/fetch", "--output-format", "json")
    result = json.loads(done.stdout)
    assert not result["is_error"], result
    assert user_prompt(peri).startswith("Got: [not run: denied: ")
    assert "command /fetch pre-approves Bash(curl:*)" in done.stderr  # the trust warning
    assert [d["tool_input"]["command"] for d in result["permission_denials"]] == ["curl --version"]
    # trusted, the same file's grant holds and the line runs
    trusted = peri.json("-p", "/fetch", "--trust-workspace")
    assert not trusted["is_error"] and trusted["permission_denials"] == []
    assert user_prompt(peri).startswith("Got: curl ")


def test_a_bang_lines_output_is_capped_as_bash_output_is(peri: Peri) -> None:
    command(peri.home, "many.md", "---\nallowed-tools: Bash(seq:*)\n---\nLines:\n!`seq 1 200000`\n")
    peri.server.set_script([{"text": "ok"}])
    result = peri.json("-p", "/many")
    assert not result["is_error"], result
    prompt = user_prompt(peri)
    assert "[Output was 200000 lines" in prompt and prompt.rstrip().endswith("200000")
    assert len(prompt) < 32_000


def test_at_paths_inside_are_attached_and_outside_ones_are_not_silently_dropped(
    peri: Peri, tmp_path: Path
) -> None:
    (peri.workspace / "notes.txt").write_text("INSIDE-NOTES\n")
    outside = tmp_path / "outside-secret.txt"
    outside.write_text("OUTSIDE-SECRET\n")
    command(peri.workspace, "look.md", f"Read @notes.txt and @{outside}\n")
    command(peri.home, "mine.md", f"Mine: @{outside}\n")
    peri.server.set_script([{"text": "a"}, {"text": "b"}, {"text": "c"}])
    done = peri.run("-p", "/look", "--output-format", "json")
    assert not json.loads(done.stdout)["is_error"]
    sent = json.dumps(peri.model_calls()[-1])
    assert "INSIDE-NOTES" in sent and "OUTSIDE-SECRET" not in sent
    assert f"@{outside}: not attached, it is outside the workspace" in done.stderr
    # the user's own command reads as the Read tool reads: a hidden path asks (headless: no)
    (peri.home / ".ssh").mkdir()
    (peri.home / ".ssh" / "id_rsa").write_text("PRIVATE-KEY\n")
    command(peri.home, "mine.md", f"Mine: @{outside} and @~/.ssh/id_rsa\n")
    done = peri.run("-p", "/mine", "--output-format", "json")
    sent = json.dumps(peri.model_calls()[-1])
    assert "OUTSIDE-SECRET" in sent and "PRIVATE-KEY" not in sent
    assert "@~/.ssh/id_rsa: not attached, denied: " in done.stderr
    denied = peri.run("-p", "/mine", "--disallowedTools", f"Read(/{outside})")  # //abs/path
    assert "OUTSIDE-SECRET" not in json.dumps(peri.model_calls()[-1])
    assert f"@{outside}: not attached, denied: " in denied.stderr


def test_namespaced_and_shadowed_commands_are_reachable(peri: Peri) -> None:
    command(peri.workspace, "frontend/component.md", "Make the $1 component\n")
    command(peri.workspace, "review.md", "Project review of $ARGUMENTS\n")
    command(peri.home, "review.md", "User review of $ARGUMENTS\n")
    command(peri.workspace, "compact.md", "Not the built-in\n")
    peri.server.set_script([{"text": "x"}] * 4)
    for typed, sent in (
        ("/frontend:component Button", "Make the Button component\n"),
        ("/component Card", "Make the Card component\n"),
        ("/review 7", "Project review of 7\n"),
        ("/user:review 8", "User review of 8\n"),
    ):
        result = peri.json("-p", typed)
        assert not result["is_error"], (typed, result)
        assert user_prompt(peri) == sent, typed


def test_unknown_slash_words_still_go_to_the_model_as_text(peri: Peri) -> None:
    command(peri.workspace, "review.md", "Review\n")
    peri.server.set_script([{"text": "a"}, {"text": "b"}])
    for typed in ("/etc/hosts please", "/project:nothing here"):
        assert not peri.json("-p", typed)["is_error"]
        assert user_prompt(peri) == typed


def test_hostile_command_files_are_named_and_peri_goes_on(peri: Peri) -> None:
    import os

    root = peri.workspace / ".claude" / "commands"
    root.mkdir(parents=True)
    os.mkfifo(root / "pipe.md")
    (root / "huge.md").write_text("x" * (MAX_COMMAND_BYTES + 1))
    (root / "bad.md").write_text("---\ndescription: [oops\n  - : {\n---\nB\n")
    (root / "latin.md").write_bytes(b"caf\xe9\n")
    command(peri.workspace, "fine.md", "Fine $ARGUMENTS\n")
    peri.server.set_script([{"text": "ok"}])
    done = peri.run("-p", "/fine yes", "--output-format", "json", timeout=30)
    assert done.returncode == 0, done.stderr
    assert user_prompt(peri) == "Fine yes\n"
    assert "Traceback" not in done.stderr
    for name in ("pipe.md", "huge.md", "bad.md", "latin.md"):
        assert f"{name} (.claude/commands) skipped" in done.stderr, name


# --- model aliases --------------------------------------------------------------------------


def test_a_commands_model_alias_reaches_the_server_as_a_full_model_id(peri: Peri) -> None:
    command(peri.workspace, "quick.md", "---\nmodel: haiku\n---\nQuick $ARGUMENTS\n")
    peri.server.set_script([{"text": "fast"}, {"text": "usual"}])
    result = peri.json("-p", "/quick look")
    assert not result["is_error"], result
    assert peri.model_calls()[-1]["model"] == ALIASES["haiku"] == "claude-haiku-4-5"
    again = peri.json("-p", "next", "-r", result["session_id"])  # the next turn: the session's
    assert not again["is_error"]
    assert peri.model_calls()[-1]["model"] != ALIASES["haiku"]


def test_an_agent_types_model_alias_reaches_the_server_as_a_full_model_id(peri: Peri) -> None:
    agents = peri.workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "scout.md").write_text("---\ndescription: Scouts\nmodel: opus\n---\nScout.\n")
    peri.server.set_script(
        [
            {
                "when": "main task",
                "tool_calls": [
                    {
                        "name": "Agent",
                        "input": {
                            "prompt": "scout it",
                            "description": "s",
                            "subagent_type": "scout",
                        },
                    }
                ],
            },
            {"when": "scout it", "text": "scouted"},
            {"when": "main task", "text": "done"},
        ]
    )
    result = peri.json("-p", "main task", "--permission-mode", "bypass")
    assert not result["is_error"], result
    child = [b for b in peri.model_calls() if first_prompt(b) == "scout it"]
    assert [b["model"] for b in child] == [ALIASES["opus"]]


def test_with_openai_an_alias_falls_back_to_the_session_model_with_a_note(peri: Peri) -> None:
    peri.provider = "openai"
    command(peri.workspace, "quick.md", "---\nmodel: sonnet\n---\nQuick\n")
    peri.server.set_script([{"text": "ok"}])
    done = peri.run("-p", "/quick", "--model", "gpt-5.5", "--output-format", "json")
    assert not json.loads(done.stdout)["is_error"], done.stderr
    assert peri.model_calls()[-1]["model"] == "gpt-5.5"
    assert "model alias 'sonnet'" in done.stderr and "gpt-5.5" in done.stderr


def test_a_pretooluse_hook_judges_a_bang_line_as_it_judges_any_bash_call(peri: Peri) -> None:
    settings = peri.home / ".peri" / "settings.json"
    settings.parent.mkdir(parents=True)
    block = {"type": "command", "command": "echo no bangs here >&2; exit 2"}
    settings.write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [block]}]}})
    )
    command(peri.home, "ls.md", "---\nallowed-tools: Bash(ls:*)\n---\nFiles: !`ls`\n")
    peri.server.set_script([{"text": "ok"}])
    result = peri.json("-p", "/ls")
    assert not result["is_error"], result
    assert user_prompt(peri) == "Files: [not run: Blocked by a PreToolUse hook: no bangs here]\n"
