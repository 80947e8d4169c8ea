"""An output style in the frozen prompt: its text in its own section, the concise-output line of
the identity replaced for every style, Peri's coding section dropped unless the style keeps it,
and the default style's prompt byte for byte what it was."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from peri_cli.context.meta import MetaState
from peri_cli.context.snapshot import SnapshotInputs, base_section, build_snapshot
from peri_cli.context.tokens import default_counter
from peri_cli.tui.context import split_frozen


def inputs(**kw: Any) -> SnapshotInputs:
    return SnapshotInputs(
        workspace=Path("/w"),
        today=date(2026, 1, 2),
        platform="Linux",
        is_git=True,
        guide_text="GUIDE-TEXT",
        skill_listing="# Skills\n- demo: does things",
        skills=["demo"],
        **kw,
    )


def test_the_default_style_changes_no_byte_and_records_no_name() -> None:
    plain = build_snapshot(inputs())
    assert build_snapshot(inputs(style_name="", style_text="")).system == plain.system
    assert plain.output_style is None
    assert base_section("identity") in plain.system and base_section("working") in plain.system


def test_a_style_that_keeps_the_coding_instructions() -> None:
    snap = build_snapshot(
        inputs(style_name="Explanatory", style_text="STYLE-BODY", style_keeps_coding=True)
    )
    system = snap.system
    assert snap.output_style == "Explanatory"
    assert "# Output style: Explanatory\n\nSTYLE-BODY\n\n# Environment" in system
    # Every style drops the identity's "concise" instruction (Claude Code: all styles drop the
    # efficient-output instructions); the coding section, the care rules and the tools stay.
    assert base_section("identity") not in system and "concise" not in system
    assert system.startswith(base_section("identity-styled"))
    assert base_section("working") in system
    assert base_section("safety") in system and "# Tools\n" in system
    # After the environment: the guide and the skills as always.
    assert system.index("# Environment") < system.index("GUIDE-TEXT") < system.index("# Skills")


def test_a_style_without_the_coding_instructions_drops_the_working_section() -> None:
    system = build_snapshot(
        inputs(style_name="Pirate", style_text="Say arr.", style_keeps_coding=False)
    ).system
    assert base_section("working") not in system and "# How to work" not in system
    assert base_section("safety") in system and "# Tools\n" in system
    assert "# Output style: Pirate\n\nSay arr." in system


def test_the_users_meta_harness_overrides_stay_under_a_style() -> None:
    state = MetaState(overridden=frozenset({"identity", "working"}))
    texts = {"identity": "You are Zed.", "working": "# Work\nMy way."}
    system = build_snapshot(
        inputs(
            meta=state,
            overrides=texts,
            style_name="Pirate",
            style_text="Say arr.",
            style_keeps_coding=False,
        )
    ).system
    assert system.startswith("You are Zed.\n\n") and "# Work\nMy way." in system


def test_context_counts_the_style_in_the_base_prompt_not_the_guide() -> None:
    system = build_snapshot(
        inputs(style_name="S", style_text="# A heading of its own\nbody", style_keeps_coding=True)
    ).system
    base, guide, skills = split_frozen(system)
    assert "# Output style: S" in base and "# A heading of its own" in base
    assert "Output style" not in guide and "GUIDE-TEXT" in guide
    assert default_counter().count_text(base) > 0 and skills.startswith("# Skills")
