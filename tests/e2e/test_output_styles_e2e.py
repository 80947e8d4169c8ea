"""Output styles end to end (CONTRACT §12): the real `peri -p`, the real SDKs, the fake model
server. The style's text is in the frozen system prompt; changing `outputStyle` mid-session
changes nothing for that session (a resume sends the same bytes, `/clear` says it waits) while
the next new session takes the new style; an unknown name warns and the default is used; an
enabled plugin's `output-styles/` is one more source."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from peri_cli.context.snapshot import base_section
from peri_cli.session.transcript_file import load
from tests.e2e.conftest import Peri, system_text
from tests.e2e.test_plugins_e2e import MARKET, added, git, installed


def style(peri: Peri, filename: str, text: str) -> None:
    folder = peri.workspace / ".claude" / "output-styles"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / filename).write_text(text)


def choose(peri: Peri, name: str) -> None:
    folder = peri.workspace / ".peri"
    folder.mkdir(exist_ok=True)
    (folder / "settings.local.json").write_text(json.dumps({"outputStyle": name}))


def test_the_style_is_frozen_into_the_session_and_a_resume_keeps_it(
    peri: Peri, provider: str
) -> None:
    peri.provider = provider
    style(peri, "pirate.md", "---\nname: Pirate\n---\nPIRATE-STYLE: say arr.\n")
    style(peri, "terse.md", "---\nkeep-coding-instructions: true\n---\nTERSE-STYLE: one line.\n")
    choose(peri, "pirate")
    peri.server.set_script([{"text": "arr"}, {"text": "still arr"}, {"text": "short"}])
    first = peri.json("-p", "hello")
    assert first["result"] == "arr", first
    system = system_text(peri.model_calls()[0])
    assert "# Output style: Pirate\n\nPIRATE-STYLE: say arr." in system
    assert base_section("working") not in system  # a custom style drops the coding section
    assert base_section("safety") in system
    header = load(peri.transcript(first["session_id"])).header
    assert header.snapshot.output_style == "Pirate"

    choose(peri, "terse")  # mid-session: the session keeps its frozen prompt
    again = peri.json("-r", first["session_id"], "-p", "and now?")
    assert again["result"] == "still arr", again
    assert system_text(peri.model_calls()[1]) == system

    fresh = peri.json("-p", "a new session")
    new_system = system_text(peri.model_calls()[2])
    assert fresh["session_id"] != first["session_id"]
    assert "# Output style: terse\n\nTERSE-STYLE: one line." in new_system
    assert "PIRATE-STYLE" not in new_system and base_section("working") in new_system


def test_clear_says_the_style_waits_for_a_new_session(peri: Peri) -> None:
    peri.server.set_script([{"text": "hi"}])
    first = peri.json("-p", "hello")
    choose(peri, "Explanatory")
    cleared = peri.json("-r", first["session_id"], "-p", "/clear")
    assert "keeps its frozen prompt" in cleared["result"], cleared
    assert "stays Default in this session" in cleared["result"]
    assert "Explanatory applies from the next new session" in cleared["result"]


def test_an_unknown_style_warns_and_the_default_prompt_is_sent(peri: Peri) -> None:
    choose(peri, "Nonesuch")
    style(peri, "bad.md", "---\nkeep-coding-instructions: maybe\n---\nx\n")
    peri.server.set_script([{"text": "hi"}])
    done = peri.run("-p", "hello")
    assert done.returncode == 0, done.stderr
    assert "outputStyle 'Nonesuch' is not an output style here" in done.stderr
    assert "bad.md: keep-coding-instructions must be true or false; skipped" in done.stderr
    assert "Traceback" not in done.stderr
    system = system_text(peri.model_calls()[0])
    assert system.startswith(base_section("identity")) and "# Output style" not in system


@pytest.fixture
def market(tmp_path: Path) -> Path:
    """The fixture marketplace (tests/fixtures/plugins/market) as a git repository."""
    repo = tmp_path / "market"
    shutil.copytree(MARKET, repo)
    git("init", "-q", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "plugins", cwd=repo)
    return repo


def test_an_enabled_plugins_output_style_can_be_chosen(peri: Peri, market: Path) -> None:
    added(peri, market)
    installed(peri, "peri-skill")
    choose(peri, "haiku")
    peri.server.set_script([{"text": "five seven five"}])
    result = peri.json("-p", "hello")
    assert result["result"] == "five seven five", result
    system = system_text(peri.model_calls()[0])
    assert "# Output style: Haiku\n\nHAIKU-STYLE-MARKER" in system
    assert base_section("working") not in system  # keep-coding-instructions unset: false
