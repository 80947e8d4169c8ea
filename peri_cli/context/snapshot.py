"""The frozen base prompt: built once per session, stored in the header, reused byte for byte."""

from __future__ import annotations

import platform
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from importlib.resources import files
from pathlib import Path

from peri_cli.context.meta import ALL_ON, SECTION_IDS, MetaState
from peri_cli.session.transcript import Snapshot

# Base sections in prompt order; each id can be replaced through the Meta Harness.
BASE_SECTIONS = SECTION_IDS
# Capabilities with a line in the `# Tools` section (context/prompts/tools-<name>.md), in order.
TOOL_NOTES = ("files", "search", "shell", "subagents")


@cache
def base_section(section_id: str) -> str:
    return (files("peri_cli.context") / "prompts" / f"{section_id}.md").read_text("utf-8").strip()


@cache
def tool_note(capability: str) -> str:
    return base_section(f"tools-{capability}")


@dataclass(frozen=True)
class SnapshotInputs:
    """Everything the frozen prompt is made of; gathered at the edge, then rendered purely."""

    workspace: Path
    today: date
    platform: str
    is_git: bool
    guide_text: str = ""
    guide_files: list[str] = field(default_factory=list)
    guide_warnings: list[str] = field(default_factory=list)
    skill_listing: str = ""  # the `# Skills` section (extensions/skills/listing), or ""
    skills: list[str] = field(default_factory=list)  # the names it lists
    meta: MetaState = ALL_ON  # the Meta Harness state this session freezes
    overrides: dict[str, str] = field(default_factory=dict)  # section id -> its override text
    has_subagents: bool = True  # some SubAgent type exists (the Agent tool is offered)
    has_todos: bool = True  # the TodoWrite tool is offered (setting `todoTool`)


def render_system(inputs: SnapshotInputs) -> str:
    """Base sections (or their overrides), the notes of the capabilities that are on, then the
    environment, the project guide and the skill listing (only while `skills` is on)."""
    meta = inputs.meta
    sections = [
        inputs.overrides[s] if s in meta.overridden else base_section(s) for s in BASE_SECTIONS
    ]
    notes = [
        tool_note(c)
        for c in TOOL_NOTES
        if meta.enabled(c) and (c != "subagents" or inputs.has_subagents)
    ]
    if inputs.has_todos:
        notes.append(base_section("tools-tasks"))
    if notes:
        sections.insert(2, "# Tools\n" + "\n".join(f"- {n}" for n in notes))
    sections.append(
        "# Environment\n"
        f"- Workspace: {inputs.workspace}\n"
        f"- Platform: {inputs.platform}\n"
        f"- Git repository: {'yes' if inputs.is_git else 'no'}\n"
        f"- Session started: {inputs.today.isoformat()}"
    )
    if inputs.guide_text.strip():
        sections.append(
            "# Project guide\nThe project's own instructions; follow them.\n\n"
            + inputs.guide_text.strip()
        )
    if inputs.skill_listing.strip() and meta.enabled("skills"):
        sections.append(inputs.skill_listing.strip())
    return "\n\n".join(sections) + "\n"


def build_snapshot(inputs: SnapshotInputs) -> Snapshot:
    return Snapshot(
        system=render_system(inputs),
        guide_files=inputs.guide_files,
        guide_warnings=inputs.guide_warnings,
        skills=list(inputs.skills) if inputs.meta.enabled("skills") else [],
        meta_harness=inputs.meta.to_header(),
    )


def detect_environment(workspace: Path) -> tuple[str, bool]:
    """(platform description, whether the workspace is inside a git repository)."""
    is_git = any((p / ".git").exists() for p in (workspace, *workspace.parents))
    return f"{platform.system()} {platform.release()}".strip(), is_git
