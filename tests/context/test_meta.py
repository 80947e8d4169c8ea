"""The Meta Harness: names, resolution of `meta_harness` with provenance, validation of values and
override files, the frozen state, and what it removes from the prompt and the tools."""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from peri_cli.agent.workspace import load_workspace
from peri_cli.base.settings import LoadedSettings, load_settings
from peri_cli.base.settings_check import SettingsError
from peri_cli.context.meta import (
    ALL_ON,
    BUILTIN_SUBAGENTS,
    CAPABILITY_NAMES,
    MAX_OVERRIDE_BYTES,
    NAME_RE,
    SECTION_IDS,
    MetaRegistry,
    MetaState,
    resolve,
)
from peri_cli.context.snapshot import SnapshotInputs, base_section, build_snapshot
from peri_cli.extensions.extra_tools import EXECUTE_NAME, SEARCH_NAME
from peri_cli.session.transcript import Snapshot
from peri_cli.tools import builtin_tools, capability_tools
from peri_cli.tools.agent import AgentTool
from peri_cli.tools.skill import SkillTool


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    (path / ".peri" / "meta").mkdir(parents=True)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "peri-home"
    (path / "meta").mkdir(parents=True)
    return path


def user_settings(home: Path, meta: dict[str, Any]) -> Path:
    path = home / "settings.json"
    path.write_text(json.dumps({"meta_harness": meta}))
    return path


def project_settings(ws: Path, meta: dict[str, Any], name: str = "settings.json") -> Path:
    path = ws / ".peri" / name
    path.write_text(json.dumps({"meta_harness": meta}))
    return path


def loaded(ws: Path, home: Path) -> LoadedSettings:
    return load_settings(ws, home, {})


def board(ws: Path, home: Path) -> Any:
    return resolve(loaded(ws, home), workspace=ws, peri_home=home)


def every_builtin_tool() -> list[str]:
    """The built-in tools a capability brings (TodoWrite has its own setting, `todoTool`)."""
    tools = [t.name for t in builtin_tools() if t.name != "TodoWrite"]
    tools += [AgentTool.name, SkillTool.name, SEARCH_NAME, EXECUTE_NAME, "ExitPlanMode"]
    return tools


# --- names -------------------------------------------------------------------------------------


def test_names_are_stable_slugs_and_distinct() -> None:
    names = [*SECTION_IDS, *CAPABILITY_NAMES]
    assert all(NAME_RE.fullmatch(n) for n in names)
    assert len(set(names)) == len(names)
    assert SECTION_IDS == ("identity", "working", "safety")
    assert CAPABILITY_NAMES == (
        "files",
        "search",
        "shell",
        "subagents",
        "skills",
        "mcp",
        "deferred",
        "git",
        "notes",
        "questions",
    )
    for section in SECTION_IDS:
        assert base_section(section)  # each section id has its built-in text


def test_every_builtin_tool_belongs_to_exactly_one_capability() -> None:
    brings = capability_tools()  # from each tool's own traits
    claimed = [tool for tools in brings.values() for tool in tools]
    assert len(claimed) == len(set(claimed)), "a tool is claimed twice"
    assert sorted(claimed) == sorted(every_builtin_tool())
    assert set(brings) <= set(CAPABILITY_NAMES)
    assert "Bash" in brings["shell"] and {"Read", "Write", "Edit"} <= set(brings["files"])


# --- resolution and precedence -----------------------------------------------------------------


def test_nothing_set_means_all_on_and_built_in(ws: Path, home: Path) -> None:
    result = board(ws, home)
    assert result.state == ALL_ON
    assert result.warnings == []
    assert [(r.id, r.overridden, r.source) for r in result.sections] == [
        (s, False, "built-in") for s in SECTION_IDS
    ]
    assert all(r.enabled and r.source == "built-in" for r in result.capabilities)


def test_project_wins_key_by_key_and_each_value_keeps_its_file(ws: Path, home: Path) -> None:
    user = user_settings(home, {"shell": False, "git": False, BUILTIN_SUBAGENTS: False})
    project = project_settings(ws, {"shell": True})
    local = project_settings(ws, {"notes": False}, "settings.local.json")
    result = board(ws, home)
    caps = {r.name: (r.enabled, r.source) for r in result.capabilities}
    assert caps["shell"] == (True, str(project))
    assert caps["git"] == (False, str(user))
    assert caps["notes"] == (False, str(local))
    assert caps["files"] == (True, "built-in")
    assert (result.builtin_subagents.enabled, result.builtin_subagents.source) == (
        False,
        str(user),
    )
    assert result.state == MetaState(disabled=frozenset({"git", "notes"}), builtin_subagents=False)


def test_override_file_is_the_one_beside_the_setting_that_enabled_it(ws: Path, home: Path) -> None:
    (home / "meta" / "identity.md").write_text("USER identity")
    (ws / ".peri" / "meta" / "identity.md").write_text("PROJECT identity")
    (home / "meta" / "safety.md").write_text("USER safety")
    (ws / ".peri" / "meta" / "safety.md").write_text("PROJECT safety")
    user_settings(home, {"identity": True, "safety": True})
    project = project_settings(ws, {"safety": True})
    result = board(ws, home)
    assert result.texts == {"identity": "USER identity", "safety": "PROJECT safety"}
    rows = {r.id: r for r in result.sections}
    assert rows["identity"].source == str(home / "meta" / "identity.md")
    assert rows["safety"].source == str(ws / ".peri" / "meta" / "safety.md")
    assert rows["safety"].setting == str(project)
    assert result.state.overridden == {"identity", "safety"}


def test_project_false_keeps_the_built_in_over_the_users_override(ws: Path, home: Path) -> None:
    (home / "meta" / "working.md").write_text("USER working")
    user_settings(home, {"working": True})
    project_settings(ws, {"working": False})
    result = board(ws, home)
    assert result.texts == {} and result.state.overridden == frozenset()


# --- validation --------------------------------------------------------------------------------


def test_unknown_name_warns_with_the_known_names_and_is_ignored(ws: Path, home: Path) -> None:
    project = project_settings(ws, {"Skills": False, "frobnicate": True, "shell": False})
    result = board(ws, home)
    skills, frob = result.warnings
    assert skills.startswith(f"{project}: meta_harness.Skills: unknown name")
    assert "did you mean 'skills'" in skills
    assert "identity, working, safety" in frob and "files, search, shell" in frob
    assert BUILTIN_SUBAGENTS in frob
    assert result.state.disabled == {"shell"}  # the known key still applies


def test_unknown_name_with_control_characters_is_shown_visibly(ws: Path, home: Path) -> None:
    project_settings(ws, {"\x1b]0;pwned\x07": True})
    (warning,) = board(ws, home).warnings
    assert "\x1b" not in warning and "\x07" not in warning


@pytest.mark.parametrize("value", ["no", 0, None, [], {}])
def test_non_boolean_is_an_error_naming_file_and_key(ws: Path, home: Path, value: Any) -> None:
    path = project_settings(ws, {"shell": value})
    with pytest.raises(SettingsError) as e:
        loaded(ws, home)
    assert str(e.value).startswith(f"{path}: meta_harness.shell: expected true or false")
    assert "\n" not in str(e.value)


def _kept(ws: Path, home: Path, section: str = "identity") -> str:
    project_settings(ws, {section: True})
    result = board(ws, home)
    assert result.texts == {} and result.state == ALL_ON
    assert [r.overridden for r in result.sections] == [False, False, False]
    (warning,) = result.warnings
    assert f"the built-in {section!r} section is kept" in warning
    return warning


def test_missing_override_file_keeps_the_built_in(ws: Path, home: Path) -> None:
    assert "identity.md: file not found" in _kept(ws, home)


def test_empty_override_file_keeps_the_built_in(ws: Path, home: Path) -> None:
    (ws / ".peri" / "meta" / "identity.md").write_text("  \n\n \t\n")
    assert "is empty" in _kept(ws, home)


def test_oversized_override_file_keeps_the_built_in(ws: Path, home: Path) -> None:
    (ws / ".peri" / "meta" / "identity.md").write_text("x" * (MAX_OVERRIDE_BYTES + 1))
    assert "is larger than 64 KiB" in _kept(ws, home)


def test_fifo_override_is_not_opened(ws: Path, home: Path) -> None:
    os.mkfifo(ws / ".peri" / "meta" / "identity.md")  # no writer: reading would block forever
    assert "FIFO" in _kept(ws, home)


def test_binary_override_keeps_the_built_in(ws: Path, home: Path) -> None:
    (ws / ".peri" / "meta" / "identity.md").write_bytes(b"hi\x00there")
    assert "binary" in _kept(ws, home)


def test_project_override_linking_out_of_the_workspace_is_refused(
    ws: Path, home: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("outside text")
    (ws / ".peri" / "meta" / "identity.md").symlink_to(secret)
    assert "resolves outside" in _kept(ws, home)


@pytest.mark.parametrize(
    "line", ["# Environment", "# Skills", "#   project   GUIDE", "# Tools and more", "# tools"]
)
def test_override_forging_a_peri_heading_keeps_the_built_in(
    ws: Path, home: Path, line: str
) -> None:
    (ws / ".peri" / "meta" / "working.md").write_text(f"# How I work\n- fine\n{line}\n- evil\n")
    warning = _kept(ws, home, "working")
    assert "line 3" in warning and "reserved" in warning


def test_a_usable_override_is_trimmed_and_crlf_normalized(ws: Path, home: Path) -> None:
    (ws / ".peri" / "meta" / "safety.md").write_text("\r\n# My care\r\n- be nice\r\n\r\n")
    project_settings(ws, {"safety": True})
    assert board(ws, home).texts == {"safety": "# My care\n- be nice"}


def test_untrusted_project_cannot_turn_back_on_what_the_user_turned_off(
    ws: Path, home: Path, tmp_path: Path
) -> None:
    user_settings(home, {"shell": False})
    project_settings(ws, {"shell": True, "git": False})
    settings, trust = load_workspace(ws, home, {}, home=tmp_path)
    assert not trust.trusted
    assert [item.kind for item in trust.loosenings] == ["meta_harness"]
    assert settings.settings.meta_harness == {"shell": False, "git": False}  # stricter applies
    trusted, _ = load_workspace(ws, home, {}, home=tmp_path, trust_flag=True)
    assert trusted.settings.meta_harness == {"shell": True, "git": False}


# --- the frozen state --------------------------------------------------------------------------


def test_header_round_trip_keeps_only_what_differs_from_all_on() -> None:
    state = MetaState(
        overridden=frozenset({"working"}),
        disabled=frozenset({"shell", "mcp"}),
        builtin_subagents=False,
    )
    header = state.to_header()
    assert header == {"working": True, "shell": False, "mcp": False, BUILTIN_SUBAGENTS: False}
    assert MetaState.from_header(header) == state
    assert ALL_ON.to_header() == {}


def test_a_session_from_before_the_meta_harness_is_all_on() -> None:
    old = Snapshot.model_validate({"system": "frozen"})  # a header written without the field
    assert MetaState.from_header(old.meta_harness) == ALL_ON
    # names a later version may add are ignored, not fatal
    assert MetaState.from_header({"teleport": False, "shell": False}).disabled == {"shell"}


def test_contributions_of_removed_capabilities_are_dropped() -> None:
    state = MetaState(disabled=frozenset({"git", "mcp"}))
    assert not state.keeps_contribution("git") and not state.keeps_contribution("mcp")
    assert state.keeps_contribution("notes") and state.keeps_contribution("agent_type")


def test_registry_refuses_removed_tools_and_deferred_ones_when_deferred_is_off() -> None:
    tools = {t.name: t for t in builtin_tools()}
    registry = MetaRegistry(meta=MetaState(disabled=frozenset({"shell", "deferred"})))
    for tool in tools.values():
        registry.add(tool)
    registry.add(tools["Read"], deferred=True)
    assert "Bash" not in registry.direct and "Read" in registry.direct
    assert registry.deferred == {}
    assert all(s.name != "Bash" for s in registry.specs())
    on = MetaRegistry(meta=ALL_ON)
    on.add(tools["Bash"], deferred=True)
    assert "Bash" in on.deferred


# --- the frozen prompt -------------------------------------------------------------------------


def inputs(**kw: Any) -> SnapshotInputs:
    return SnapshotInputs(
        workspace=Path("/w"),
        today=date(2026, 1, 2),
        platform="Linux",
        is_git=True,
        skill_listing="# Skills\n- demo: does things",
        skills=["demo"],
        **kw,
    )


def test_replaced_section_and_removed_capabilities_shape_the_prompt() -> None:
    full = build_snapshot(inputs())
    assert base_section("identity") in full.system
    assert "# Tools\n" in full.system and "Bash" in full.system
    assert "# Skills" in full.system and full.skills == ["demo"]
    assert full.meta_harness == {}
    state = MetaState(overridden=frozenset({"identity"}), disabled=frozenset({"shell", "skills"}))
    snap = build_snapshot(inputs(meta=state, overrides={"identity": "You are Zed."}))
    assert snap.system.startswith("You are Zed.\n\n")
    assert base_section("identity") not in snap.system
    assert base_section("working") in snap.system  # other sections untouched
    assert "Bash" not in snap.system and "Shell:" not in snap.system
    assert "# Skills" not in snap.system and snap.skills == []
    assert snap.meta_harness == {"identity": True, "shell": False, "skills": False}


def test_no_tool_notes_at_all_leaves_no_empty_tools_heading() -> None:
    off = frozenset({"files", "search", "shell", "subagents"})
    snap = build_snapshot(inputs(meta=MetaState(disabled=off), has_todos=False))
    assert "# Tools" not in snap.system
    kept = build_snapshot(inputs(meta=MetaState(disabled=off))).system
    assert "# Tools\n- Tasks: " in kept and "TodoWrite" in kept
    assert "SubAgent" not in build_snapshot(inputs(has_subagents=False)).system
