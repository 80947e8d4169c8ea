"""SessionStart and PreCompact hooks around the session (issue 14): real hook scripts, the real
Compactor against the scripted provider. PreCompact runs before every Full compaction (trigger
`auto` or `manual`, the focus as `custom_instructions`) and cannot block; SessionStart's context
waits in the inbox for the next Receive."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from peri_cli.agent.compaction.config import CompactConfig
from peri_cli.agent.sessionstart import run_session_start
from peri_cli.base.events import Compacted, Notice
from peri_cli.extensions.hookpoints import Hooks
from peri_cli.extensions.hooks import HookConfig, hooks_from_settings
from peri_cli.permissions.rule_syntax import RuleSource
from peri_cli.providers.scripted import ScriptedProvider, ScriptedReply
from peri_cli.session.store import SessionStore
from tests.agent.test_compaction import SUMMARY, collect, compactor_of, make_agent, one_turn_session


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def store(tmp_path: Path, ws: Path) -> SessionStore:
    return SessionStore(tmp_path / "home", ws)


def script(ws: Path, name: str, body: str) -> str:
    path = ws / f"{name}.sh"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def hooks(ws: Path, settings: dict[str, Any], *, trusted: bool = True) -> Hooks:
    config = HookConfig()
    config.extend(hooks_from_settings(settings, RuleSource("user", "/u/settings.json")))
    assert config.problems == []
    return Hooks(
        config=config,
        trusted=trusted,
        cwd=ws,
        env={"PATH": "/usr/bin:/bin"},
        session_id="s-1",
        transcript_path=ws / "t.jsonl",
    )


def command(path: str, matcher: str = "") -> list[dict[str, Any]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": path}]}]


async def test_an_automatic_full_compaction_runs_precompact_then_sessionstart(
    store: SessionStore, ws: Path
) -> None:
    log = ws / "pre.json"
    pre = script(ws, "pre", f"cat > {log}\necho 'PreCompact says no' >&2\nexit 2\n")
    start = script(ws, "start", "echo AFTER-THE-COMPACTION\n")
    provider = ScriptedProvider([ScriptedReply(text=SUMMARY)])
    agent = make_agent(
        store, one_turn_session(9_700), provider, CompactConfig(context_window=10_000)
    )
    agent.hooks = hooks(
        ws,
        {
            "PreCompact": command(pre, "auto"),
            "SessionStart": command(start, "compact"),
        },
    )
    events = await collect(compactor_of(agent).before_request(agent))
    compacted = [e for e in events if isinstance(e, Compacted)]
    assert [c.strategy for c in compacted] == ["full"]  # exit 2 cannot block a compaction
    payload = json.loads(log.read_text())
    assert payload["hook_event_name"] == "PreCompact"
    assert (payload["trigger"], payload["custom_instructions"]) == ("auto", "")
    said = [e.text for e in events if isinstance(e, Notice)]
    assert any("PreCompact says no" in line for line in said), said
    assert events.index(compacted[0]) > next(
        i for i, e in enumerate(events) if isinstance(e, Notice)
    )
    assert agent.inbox == ["[Context from a SessionStart hook]\nAFTER-THE-COMPACTION"]


async def test_a_manual_compaction_says_manual_and_the_focus(store: SessionStore, ws: Path) -> None:
    log = ws / "pre.json"
    pre = script(ws, "pre", f"cat > {log}\n")
    provider = ScriptedProvider([ScriptedReply(text=SUMMARY)])
    agent = make_agent(
        store, one_turn_session(2_000), provider, CompactConfig(context_window=10_000)
    )
    agent.hooks = hooks(ws, {"PreCompact": command(pre)})
    events = await collect(compactor_of(agent).compact_now(agent, "the parser"))
    assert isinstance(events[-1], Compacted)
    payload = json.loads(log.read_text())
    assert (payload["trigger"], payload["custom_instructions"]) == ("manual", "the parser")
    assert agent.inbox == []  # no SessionStart hook: nothing waits


async def test_session_start_matches_its_source_and_respects_trust(ws: Path) -> None:
    start = script(ws, "start", "echo FROM-STARTUP\n")
    inbox: list[str] = []
    trusted = hooks(ws, {"SessionStart": command(start, "startup")})
    assert await run_session_start(trusted, inbox, "resume") == []
    assert inbox == []
    assert await run_session_start(trusted, inbox, "startup") == []
    assert inbox == ["[Context from a SessionStart hook]\nFROM-STARTUP"]
    repo = HookConfig()
    repo.extend(
        hooks_from_settings(
            {"SessionStart": command(start)}, RuleSource("project", "/ws/.peri/settings.json")
        )
    )
    untrusted = Hooks(repo, False, ws, {}, "s-1", ws / "t.jsonl")
    assert await run_session_start(untrusted, inbox, "startup") == []
    assert len(inbox) == 1  # a repository's hook does not run in an untrusted workspace
    assert await run_session_start(None, inbox, "startup") == []
