"""Skills end to end: the real skills from a public repository load, are listed in the frozen
prompt, and `/claude-api args` headless sends the skill's text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from peri_cli.session.transcript_file import load
from tests.e2e.conftest import Peri, texts

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "skills-anthropic"


@pytest.fixture
def skills(peri: Peri) -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"the skills fixtures are not at {FIXTURES}")
    root = peri.home / ".claude" / "skills"
    shutil.copytree(FIXTURES, root, ignore=shutil.ignore_patterns("README.md"))
    return root


def test_the_real_skills_are_listed_and_claude_api_runs_headless(peri: Peri, skills: Path) -> None:
    names = sorted(p.name for p in skills.iterdir() if (p / "SKILL.md").is_file())
    assert len(names) == 6
    peri.server.set_script([{"text": "migrating"}])
    result = peri.json("-p", "/claude-api migrate us to the newest model")
    assert not result["is_error"], result
    frozen = load(peri.transcript(result["session_id"])).header.snapshot
    assert sorted(frozen.skills) == names  # name + description of each, in the frozen prompt
    body = peri.model_calls()[-1]
    sent = texts(body)[-1]
    claude_api = (skills / "claude-api" / "SKILL.md").read_text()
    assert claude_api.split("---", 2)[2].strip()[:200] in sent  # the skill's own text
    assert "migrate us to the newest model" in sent
    assert [t["name"] for t in body["tools"]].count("Skill") == 1


def test_the_model_loads_a_skill_with_the_skill_tool(peri: Peri, skills: Path) -> None:
    peri.server.set_script(
        [{"tool_calls": [{"name": "Skill", "input": {"name": "frontend-design"}}]}, {"text": "ok"}]
    )
    assert not peri.json("-p", "design a page")["is_error"]
    sent = json.dumps(peri.model_calls()[-1])
    assert "frontend" in sent and str(skills / "frontend-design") in sent
