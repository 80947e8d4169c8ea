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
    # The capabilities with a built-in tool offered (None: every one; a program's `tools` may
    # leave some without): the `# Tools` section tells of no tool the model does not have.
    offered: frozenset[str] | None = None
    # The output style (extensions/output_styles): "" is the default, which changes nothing.
    style_name: str = ""
    style_text: str = ""
    style_keeps_coding: bool = True  # its `keep-coding-instructions`


def _base_sections(inputs: SnapshotInputs) -> list[str]:
    """The base sections, or their overrides (the user's own text, kept under any style). A
    style replaces the identity, whose "answer in concise Markdown" it decides instead, and
    unless it keeps the coding instructions it leaves out `working` (how to work on code)."""
    meta, styled = inputs.meta, bool(inputs.style_name)
    out = []
    for s in BASE_SECTIONS:
        if s in meta.overridden:
            out.append(inputs.overrides[s])
        elif styled and s == "identity":
            out.append(base_section("identity-styled"))
        elif not (styled and s == "working" and not inputs.style_keeps_coding):
            out.append(base_section(s))
    return out


def render_system(inputs: SnapshotInputs) -> str:
    """Base sections (or their overrides), the notes of the capabilities that are on, the output
    style, then the environment, the project guide and the skill listing (only while `skills`
    is on)."""
    meta = inputs.meta
    sections = _base_sections(inputs)
    notes = [
        tool_note(c)
        for c in TOOL_NOTES
        if meta.enabled(c)
        and (c != "subagents" or inputs.has_subagents)
        and (inputs.offered is None or c in inputs.offered)
    ]
    if inputs.has_todos:
        notes.append(base_section("tools-tasks"))
    if notes:
        # before `safety`, the last base section
        sections.insert(len(sections) - 1, "# Tools\n" + "\n".join(f"- {n}" for n in notes))
    if inputs.style_name:  # before the environment: `/context` counts it in the base prompt
        sections.append(f"# Output style: {inputs.style_name}\n\n{inputs.style_text.strip()}")
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
        output_style=inputs.style_name or None,
    )


def detect_environment(workspace: Path) -> tuple[str, bool]:
    """(platform description, whether the workspace is inside a git repository)."""
    is_git = any((p / ".git").exists() for p in (workspace, *workspace.parents))
    return f"{platform.system()} {platform.release()}".strip(), is_git
