"""The hook fields Claude Code's own plugins use (issue 39): a hook's own environment, a
plugin's `hooks/hooks.json`, `if` conditions judged by the permission rules, async and
async-rewake hooks, and a deny whose only explanation is its `systemMessage`."""

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from peri_cli.extensions import hookpayloads as h
from peri_cli.extensions.hookbackground import HOOK_WAKE_HEAD, MAX_WAKES
from peri_cli.extensions.hookpayloads import SessionInfo
from peri_cli.extensions.hookpoints import Hooks
from peri_cli.extensions.hookrun import run_hook, run_hooks
from peri_cli.extensions.hooks import (
    Hook,
    HookConfig,
    JudgedCall,
    hooks_from_plugin,
    hooks_from_settings,
    plugin_env,
)
from peri_cli.permissions.call_facts import Call, RuleContext
from peri_cli.permissions.rule_syntax import RuleSource

USER = RuleSource("user", "/home/u/.peri/settings.json")
PLUGIN = RuleSource("user", "/home/u/.peri/plugins/m/guard/hooks/hooks.json")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def script(ws: Path, name: str, body: str) -> str:
    path = ws / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def entry(**fields: Any) -> dict[str, Any]:
    return {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", **fields}]}]}


# --- a hook's own environment and a plugin's hooks.json -----------------------------------------


async def test_a_hooks_own_environment_reaches_it_and_the_shell_expands_it(ws: Path) -> None:
    root = ws / "plugins" / "guard"
    command = "printf '%s|' '${CLAUDE_PLUGIN_ROOT}' \"${CLAUDE_PLUGIN_ROOT}\" $PERI_PLUGIN_ROOT"
    found, problems = hooks_from_settings(
        entry(command=command),
        PLUGIN,
        env=plugin_env(root),
        plugin="guard@m",
    )
    assert problems == []
    (hook,) = found
    assert hook.env == {"CLAUDE_PLUGIN_ROOT": str(root), "PERI_PLUGIN_ROOT": str(root)}
    assert "plugin guard@m" in hook.label()
    run = await run_hook(hook, b"{}", cwd=ws, env=dict(os.environ))
    # Peri never expands the text: single quotes keep it literal, the shell expands the rest.
    assert run.stdout == f"${{CLAUDE_PLUGIN_ROOT}}|{root}|{root}|"
    bare = Hook("Stop", 'printf %s "$CLAUDE_PLUGIN_ROOT"')
    plain = await run_hook(bare, b"{}", cwd=ws, env={"PATH": os.environ["PATH"]})
    assert plain.stdout == ""  # no plugin, no variable


def test_a_plugins_hooks_json_parses_with_the_settings_code_and_problems() -> None:
    data = {
        "description": "Guard plugin",
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        # fields Peri does not know (Claude Code's newer ones) are ignored
                        {"type": "command", "command": "g.sh", "timeout": 10, "statusMessage": "…"},
                        {"type": "command", "command": "", "timeout": 10},
                    ],
                }
            ],
            "Nope": [],
        },
    }
    found, problems = hooks_from_plugin(data, PLUGIN, env={"X": "1"}, plugin="guard@m")
    assert [(x.command, x.timeout, x.env, x.plugin) for x in found] == [
        ("g.sh", 10.0, {"X": "1"}, "guard@m")  # timeout: seconds, as Claude Code's docs say
    ]
    assert len(problems) == 2 and all(p.startswith(PLUGIN.path + ": hooks") for p in problems)
    assert any("PreToolUse[0].hooks[1].command" in p for p in problems)
    assert hooks_from_plugin([], PLUGIN)[1] == [f"{PLUGIN.path}: expected an object with `hooks`"]
    assert hooks_from_plugin({"description": "none"}, PLUGIN) == ([], [])


# --- `if` conditions ----------------------------------------------------------------------------


def test_if_conditions_are_read_as_permission_rules_and_bad_ones_skipped() -> None:
    value = {
        "PreToolUse": [
            {
                "hooks": [
                    {"command": "commit.sh", "if": "Bash(git commit:*)"},
                    {"command": "bad.sh", "if": "Bash(git commit"},
                    {"command": "notext.sh", "if": 3},
                ]
            }
        ],
        "Stop": [{"hooks": [{"command": "stop.sh", "if": "Bash(git push:*)"}]}],
    }
    found, problems = hooks_from_settings(value, PLUGIN)
    assert [(x.command, x.condition and x.condition.text) for x in found] == [
        ("commit.sh", "Bash(git commit:*)")
    ]
    assert len(problems) == 3
    assert "PreToolUse[0].hooks[1].if" in problems[0] and "Bash(git commit" in problems[0]
    assert "hook skipped" in problems[0]
    assert "PreToolUse[0].hooks[2].if" in problems[1]
    assert "Stop[0].hooks[0].if" in problems[2] and "tool events" in problems[2]


def test_an_if_condition_runs_the_hook_only_for_calls_the_rule_matches(ws: Path) -> None:
    config = HookConfig()
    config.extend(
        hooks_from_settings(
            {
                "PreToolUse": [
                    {
                        "hooks": [
                            {"command": "commit", "if": "Bash(git commit:*)"},
                            {"command": "src", "if": "Edit(src/**)"},
                            {"command": "always"},
                        ]
                    }
                ]
            },
            USER,
        )
    )
    ctx = RuleContext(ws, trusted=True, home=ws)
    info = SessionInfo("s", ws / "t.jsonl", ws)

    def chosen(call: Call) -> list[str]:
        payload = h.pre_tool_use(info, call.tool, {}, "t")
        return [
            x.command for x in config.select("PreToolUse", payload, True, JudgedCall(call, ctx))
        ]

    bash = Call("Bash", "execute", command="git commit -m x")
    assert chosen(bash) == ["commit", "always"]
    assert chosen(Call("Bash", "execute", command="git status")) == ["always"]
    # as a deny rule sees a command: any part of it, through wrappers and paths
    assert chosen(Call("Bash", "execute", command="cd sub && git commit -am y")) == [
        "commit",
        "always",
    ]
    assert chosen(Call("Edit", "write", writes=(ws / "src" / "a.py",))) == ["src", "always"]
    assert chosen(Call("Edit", "write", writes=(ws / "docs" / "a.md",))) == ["always"]
    # without the call as the rules see it, a hook with a condition does not run
    payload = h.pre_tool_use(info, "Bash", {}, "t")
    assert [x.command for x in config.select("PreToolUse", payload, True)] == ["always"]


# --- a deny explained only by systemMessage -------------------------------------------------------


def answer(ws: Path, name: str, data: Any) -> Hook:
    command = script(ws, name, f"cat <<'EOF'\n{json.dumps(data)}\nEOF\n")
    return Hook("PreToolUse", command, source=USER)


async def test_a_deny_without_a_reason_gives_the_model_its_system_message(ws: Path) -> None:
    info = SessionInfo("s", ws / "t.jsonl", ws)
    payload = h.pre_tool_use(info, "Bash", {"command": "rm -rf x"}, "t")
    env = dict(os.environ)
    hookify = answer(
        ws,
        "hookify.sh",
        {
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"},
            "systemMessage": "**[no-rm]**\nUse trash instead of rm -rf.",
        },
    )
    outcome = await run_hooks("PreToolUse", payload, [hookify], cwd=ws, env=env)
    assert outcome.blocked and outcome.permission == "deny"
    assert outcome.reason == "**[no-rm]**\nUse trash instead of rm -rf."
    assert any("Use trash instead" in m for m in outcome.messages)  # and the user sees it
    explained = answer(
        ws,
        "explained.sh",
        {
            "hookSpecificOutput": {
                "permissionDecision": "deny",
                "permissionDecisionReason": "the reason",
            },
            "systemMessage": "for the user",
        },
    )
    outcome = await run_hooks("PreToolUse", payload, [explained], cwd=ws, env=env)
    assert outcome.reason == "the reason"
    block = answer(ws, "block.sh", {"decision": "block", "systemMessage": "blocked: why"})
    outcome = await run_hooks("PreToolUse", payload, [block], cwd=ws, env=env)
    assert outcome.reason == "blocked: why"


# --- async hooks ------------------------------------------------------------------------------


def hooks_of(ws: Path, value: dict[str, Any]) -> Hooks:
    found, problems = hooks_from_settings(value, PLUGIN)
    assert problems == []
    return Hooks(HookConfig(found), True, ws, dict(os.environ), "s", ws / "t.jsonl")


def post(ws: Path, **fields: Any) -> dict[str, Any]:
    return {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", **fields}]}]}


async def fire_post(hooks: Hooks) -> Any:
    return await hooks.run(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "git commit -m x"},
        tool_use_id="t",
        tool_response={"output": "", "is_error": False},
    )


async def test_an_async_rewake_hook_runs_in_the_background_and_wakes_the_agent(ws: Path) -> None:
    # It waits for a file made only after `run` returned: run in line, it would time out.
    waits = script(
        ws, "review.sh", "while [ ! -f go ]; do sleep 0.02; done\necho 'FINDING-42' >&2\nexit 2\n"
    )
    hooks = hooks_of(
        ws,
        post(
            ws,
            command=waits,
            timeout=30,
            asyncRewake=True,
            rewakeMessage="Background review found:",
            rewakeSummary="Review found issues",
        ),
    )
    outcome = await fire_post(hooks)
    assert outcome.messages == () and not outcome.blocked and outcome.context == ()
    assert hooks.background.busy()
    (ws / "go").touch()
    await asyncio.wait_for(hooks.background.next_done(), 30)
    assert not hooks.background.busy()
    (item,) = hooks.background.inbox
    assert item.startswith(HOOK_WAKE_HEAD)
    assert "Background review found:\n\nFINDING-42" in item
    assert hooks.background.take_notes() == ["Review found issues"]
    assert hooks.background.take_notes() == []


async def test_an_async_hooks_system_message_waits_for_the_next_turn_without_waking(
    ws: Path,
) -> None:
    says = script(
        ws,
        "says.sh",
        'echo \'{"systemMessage": "lint: 2 warnings", "decision": "block", '
        '"hookSpecificOutput": {"additionalContext": "see lint.log"}}\'\n',
    )
    fails = script(ws, "fails.sh", "echo broken >&2; exit 1\n")
    hooks = hooks_of(
        ws,
        {
            "PostToolUse": [
                {
                    "hooks": [
                        {"command": says, "async": True},
                        {"command": fails, "async": True},
                    ]
                }
            ]
        },
    )
    outcome = await fire_post(hooks)
    assert not outcome.blocked  # an async hook cannot block
    while hooks.background.busy():
        await asyncio.wait_for(hooks.background.next_done(), 30)
    (item,) = hooks.background.inbox
    assert not item.startswith(HOOK_WAKE_HEAD)
    assert "lint: 2 warnings" in item and "see lint.log" in item
    (note,) = hooks.background.take_notes()
    assert "exit code 1: broken" in note


async def test_a_rewake_hook_that_keeps_waking_stops_waking_until_the_user_speaks(
    ws: Path,
) -> None:
    nags = script(ws, "nag.sh", "echo again >&2; exit 2\n")
    hooks = hooks_of(ws, post(ws, command=nags, asyncRewake=True))
    for _ in range(MAX_WAKES + 1):
        await fire_post(hooks)
        await asyncio.wait_for(hooks.background.next_done(), 30)
    items = hooks.background.inbox
    assert [i.startswith(HOOK_WAKE_HEAD) for i in items] == [True] * MAX_WAKES + [False]
    assert any("woke the agent" in n for n in hooks.background.take_notes())
    items.clear()
    await hooks.run("UserPromptSubmit", prompt="go on")  # the user spoke
    await fire_post(hooks)
    await asyncio.wait_for(hooks.background.next_done(), 30)
    assert items[0].startswith(HOOK_WAKE_HEAD)


def test_bad_async_fields_warn_once_and_the_hook_runs_in_line() -> None:
    found, problems = hooks_from_settings(
        post(Path(), command="x.sh", asyncRewake="yes", rewakeMessage=3), PLUGIN
    )
    (hook,) = found
    assert not hook.background and not hook.rewake
    assert len(problems) == 2
    assert any("asyncRewake: expected true or false; the hook runs in line" in p for p in problems)
    assert any("rewakeMessage: expected a string" in p for p in problems)
    (rewake,) = hooks_from_settings(post(Path(), command="x.sh", asyncRewake=True), PLUGIN)[0]
    assert rewake.background and rewake.rewake  # asyncRewake implies async


async def test_stop_all_ends_background_hooks(ws: Path) -> None:
    slow = script(ws, "slow.sh", "echo $$ > pid\nsleep 300\n")
    hooks = hooks_of(ws, post(ws, command=slow, **{"async": True}))
    await fire_post(hooks)
    while not (ws / "pid").exists() or not (ws / "pid").read_text().strip():
        await asyncio.sleep(0.01)
    await hooks.background.stop_all()
    assert not hooks.background.busy()
    pid = int((ws / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        for _ in range(500):
            os.kill(pid, 0)
            await asyncio.sleep(0.02)
