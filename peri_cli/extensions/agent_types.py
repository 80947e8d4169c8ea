"""SubAgent types: the built-ins plus `.claude/agents/<type>.md` (project) and
`~/.claude/agents/<type>.md` (user); the project's file wins on a name clash.

Agent files are repository input: read as regular files with a size cap, parsed with the safe
front-matter parser; a malformed one is reported (for `/agents`) and skipped, never fatal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from peri_cli.base.frontmatter import FrontMatterError, name_list, split_front_matter
from peri_cli.base.safe_read import SafeReadError, read_text

MAX_AGENT_FILE = 64 * 1024
AGENTS_SUBDIR = Path(".claude") / "agents"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

EXPLORE_INSTRUCTIONS = (
    "You are an explorer SubAgent: investigate the repository with read-only tools and report "
    "what you found, precisely and briefly, with file paths and line numbers. You cannot change "
    "files or run commands. Your final message is all the main agent will see."
)
GENERAL_INSTRUCTIONS = (
    "You are a SubAgent working on one task for the main agent, in your own context. Do the task "
    "within its stated boundary, then end with a final message that reports what you did and "
    "found (files changed, results, anything left undone): it is all the main agent will see."
)


@dataclass(frozen=True)
class AgentType:
    name: str
    description: str
    tools: tuple[str, ...] | None = None  # None: the parent's tools (and its exact list)
    # Only the parent's read-only tools (`traits.read_only`: reading and searching files).
    read_only: bool = False
    disallowed: tuple[str, ...] = ()
    model: str | None = None
    max_turns: int | None = None
    instructions: str = ""
    source: str = "built-in"


BUILTIN_TYPES = (
    AgentType(
        "general",
        "General-purpose: the main agent's tools, for an independent piece of work",
        instructions=GENERAL_INSTRUCTIONS,
    ),
    AgentType(
        "explore",
        "Read-only investigation with the tools that read and search files: find and report, "
        "never change",
        read_only=True,
        instructions=EXPLORE_INSTRUCTIONS,
    ),
)
DEFAULT_TYPE = "general"


@dataclass
class AgentCatalog:
    types: dict[str, AgentType] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # "file: why", for /agents

    def get(self, name: str | None) -> AgentType | None:
        return self.types.get(name or DEFAULT_TYPE)

    def names(self) -> list[str]:
        return sorted(self.types)


def is_agent_name(name: object) -> bool:
    """Whether `name` may name an agent type (a file's `name:`, a program's `agents` key)."""
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def parse_agent_type(text: str, source: str, stem: str) -> AgentType:
    """One definition from its file text; FrontMatterError says what is wrong."""
    fields, body = split_front_matter(text)
    name = fields.get("name", stem)
    if not is_agent_name(name):
        raise FrontMatterError(f"name must be letters, digits, '-', '_' or '.', got {name!r}")
    description = fields.get("description")
    if not isinstance(description, str) or not description.strip():
        raise FrontMatterError("description is required")
    tools = name_list(fields.get("tools"))
    disallowed = name_list(fields.get("disallowedTools")) or []
    model = fields.get("model")
    if model is not None and not isinstance(model, str):
        raise FrontMatterError("model must be a string")
    if model in ("inherit", ""):
        model = None
    max_turns: Any = fields.get("maxTurns")
    if max_turns is not None and (
        isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1
    ):
        raise FrontMatterError("maxTurns must be a positive integer")
    return AgentType(
        name=name,
        description=" ".join(description.split()),
        tools=tuple(tools) if tools is not None else None,
        disallowed=tuple(disallowed),
        model=model,
        max_turns=max_turns,
        instructions=body.strip(),
        source=source,
    )


def discover_agent_types(
    workspace: Path,
    home: Path,
    *,
    builtins: bool = True,
    plugins: Sequence[tuple[Path, str]] = (),
) -> AgentCatalog:
    """Built-ins (unless hidden by the Meta Harness), then plugins' folders (each with the label
    it is shown by), then user files, then project files: a later definition of a name replaces
    an earlier one, so the project wins."""
    catalog = AgentCatalog()
    if builtins:
        catalog.types.update({t.name: t for t in BUILTIN_TYPES})
    roots: list[tuple[Path, str, Path | None]] = [(d, f"{label}:", d) for d, label in plugins]
    roots += [(home / AGENTS_SUBDIR, "~/", None), (workspace / AGENTS_SUBDIR, "", workspace)]
    for root, label, inside in roots:
        try:
            files = sorted(p for p in root.iterdir() if p.suffix == ".md")
        except OSError:
            continue
        for path in files[:200]:  # a folder of thousands is not a catalog
            shown = (
                f"{label}{path.name}" if inside == root else f"{label}{AGENTS_SUBDIR / path.name}"
            )
            try:
                text = read_text(path, max_bytes=MAX_AGENT_FILE, inside=inside)
                found = parse_agent_type(text, shown, path.stem)
            except SafeReadError as e:
                catalog.problems.append(f"{shown}: {e.reason}; skipped")
                continue
            except FrontMatterError as e:
                catalog.problems.append(f"{shown}: {e}; skipped")
                continue
            catalog.types[found.name] = found
    return catalog
