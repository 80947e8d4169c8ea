"""The Meta Harness: stable names for the base-prompt sections and the capabilities, and the
`meta_harness` settings map resolved against them.

A section id set to `true` replaces that base section with an override file; a capability set to
`false` removes everything it brings (prompt text, contributions, direct and deferred tools, and
what SubAgents and forks inherit); `BuiltInSubagents: false` hides the built-in SubAgent types.
Settings merge key by key (the project wins), each value keeping its file. The resolved state is
frozen in the session header (`MetaState.to_header`); a header without one means "all on".

Override files: `.peri/meta/<id>.md` when the `true` came from a project settings file (it must
stay inside the workspace), `$PERI_HOME/meta/<id>.md` when it came from the user's: the file
beside the setting that enabled it. A bad value never crashes: unknown names warn, a missing,
empty, oversized, special or reserved-text file keeps the built-in section with a warning (a
non-boolean value is already a SettingsError naming the file and key).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from peri_cli.base.safe_read import SafeReadError, read_text
from peri_cli.base.settings import PROJECT_DIR, WORKSPACE_SCOPES, LoadedSettings, Settings, Source
from peri_cli.base.textsafe import visible
from peri_cli.base.tool import Tool, ToolRegistry

# Base-prompt sections, in prompt order (their built-in text is context/prompts/<id>.md).
SECTION_IDS: tuple[str, ...] = ("identity", "working", "safety")
BUILTIN_SUBAGENTS = "BuiltInSubagents"
META_DIR = "meta"  # .peri/meta/ and $PERI_HOME/meta/
MAX_OVERRIDE_BYTES = 64 * 1024
# Headings of the sections Peri writes itself after the base ones: an override may not forge
# them (the model and `/context` take what follows such a heading as Peri's own).
RESERVED_HEADINGS: tuple[str, ...] = ("# Tools", "# Environment", "# Project guide", "# Skills")
NAME_RE = re.compile(r"[a-z0-9_-]+")


@dataclass(frozen=True)
class Capability:
    """A part of the harness that can be removed whole. Its tools are the ones whose
    `traits.capability` names it (`Tool` in `base/tool.py`), built-in, MCP or any other."""

    name: str
    summary: str
    contributions: tuple[str, ...] = ()  # names in the request-time contribution chain


CAPABILITIES: tuple[Capability, ...] = (
    Capability("files", "read, write and edit files"),
    Capability("search", "find files and search their contents"),
    Capability("shell", "run shell commands"),
    Capability("subagents", "delegate work to SubAgents"),
    Capability("skills", "the skill listing and the Skill tool"),
    Capability("mcp", "tools of the configured MCP servers", contributions=("mcp",)),
    Capability("deferred", "tools kept out of the tools list, found and run on demand"),
    Capability("git", "the current git branch in every request", contributions=("git",)),
    Capability("notes", "session-local notes in every request", contributions=("notes",)),
    Capability(
        "questions",
        "ask the user: questions with options, plan approval, plan mode's text in requests",
        contributions=("plan",),
    ),
)
CAPABILITY_NAMES: tuple[str, ...] = tuple(c.name for c in CAPABILITIES)
_BY_NAME = {c.name: c for c in CAPABILITIES}
KNOWN_NAMES: tuple[str, ...] = (*SECTION_IDS, *CAPABILITY_NAMES, BUILTIN_SUBAGENTS)


def capability(name: str) -> Capability | None:
    return _BY_NAME.get(name)


@dataclass(frozen=True)
class MetaState:
    """What one session runs with; fixed in its header at creation."""

    overridden: frozenset[str] = frozenset()  # section ids replaced by an override file
    disabled: frozenset[str] = frozenset()  # capability names removed
    builtin_subagents: bool = True

    def enabled(self, name: str) -> bool:
        return name not in self.disabled

    def keeps_tool(self, tool: Tool, *, deferred: bool = False) -> bool:
        """Whether a tool may be registered (direct, or deferred) in this session."""
        owner = tool.traits.capability
        if owner is not None and owner in self.disabled:
            return False
        return not (deferred and "deferred" in self.disabled)

    def keeps_contribution(self, name: str) -> bool:
        return not any(name in _BY_NAME[c].contributions for c in self.disabled if c in _BY_NAME)

    def to_header(self) -> dict[str, bool]:
        """The session header's `meta_harness` map: only what differs from "all on"."""
        out = {s: True for s in SECTION_IDS if s in self.overridden}
        out |= {c: False for c in CAPABILITY_NAMES if c in self.disabled}
        if not self.builtin_subagents:
            out[BUILTIN_SUBAGENTS] = False
        return out

    @classmethod
    def from_header(cls, data: Mapping[str, bool]) -> MetaState:
        """The state a session froze; names this version does not know are ignored."""
        return cls(
            overridden=frozenset(s for s in SECTION_IDS if data.get(s) is True),
            disabled=frozenset(c for c in CAPABILITY_NAMES if data.get(c) is False),
            builtin_subagents=data.get(BUILTIN_SUBAGENTS) is not False,
        )


ALL_ON = MetaState()


@dataclass(frozen=True)
class SectionRow:
    id: str
    overridden: bool
    source: str  # the override file in use, or "built-in"
    setting: str  # the settings file that asked for the override, or "built-in"


@dataclass(frozen=True)
class SwitchRow:
    name: str
    enabled: bool
    source: str  # the settings file that set the value, or "built-in"


@dataclass
class Resolution:
    """The switchboard for this workspace's current settings: the state a new session would
    freeze, the override texts, one row per name, and what was wrong."""

    state: MetaState
    texts: dict[str, str] = field(default_factory=dict)  # section id -> override text
    sections: list[SectionRow] = field(default_factory=list)
    capabilities: list[SwitchRow] = field(default_factory=list)
    builtin_subagents: SwitchRow = field(
        default_factory=lambda: SwitchRow(BUILTIN_SUBAGENTS, True, "built-in")
    )
    warnings: list[str] = field(default_factory=list)

    def to_json(self, tools: Mapping[str, Iterable[str]] | None = None) -> dict[str, object]:
        """CONTRACT §2's shape; `tools`: each capability's tools (built-in ones by their
        traits, MCP servers' patterns)."""
        tools = tools or {}
        return {
            "sections": [
                {"id": r.id, "overridden": r.overridden, "source": r.source, "setting": r.setting}
                for r in self.sections
            ],
            "capabilities": [
                {
                    "name": r.name,
                    "enabled": r.enabled,
                    "source": r.source,
                    "tools": list(tools.get(r.name, ())),
                }
                for r in self.capabilities
            ],
            "builtin_subagents": {
                "enabled": self.builtin_subagents.enabled,
                "source": self.builtin_subagents.source,
            },
            "warnings": list(self.warnings),
        }


def override_path(section: str, source: Source, *, workspace: Path, peri_home: Path) -> Path:
    """The override file for a `true` from `source`: beside the settings file that set it."""
    if source.scope in WORKSPACE_SCOPES:
        return workspace / PROJECT_DIR / META_DIR / f"{section}.md"
    return peri_home / META_DIR / f"{section}.md"


def resolve(loaded: LoadedSettings | Settings, *, workspace: Path, peri_home: Path) -> Resolution:
    """The `meta_harness` map checked against the known names, override files read."""
    if isinstance(loaded, Settings):
        loaded = LoadedSettings(settings=loaded)
    values = loaded.settings.meta_harness
    out = Resolution(state=ALL_ON)

    def origin(name: str) -> Source:
        return loaded.source_of(f"meta_harness.{name}")

    for name in values:
        if name not in KNOWN_NAMES:
            out.warnings.append(_unknown(name, origin(name)))
    overridden: set[str] = set()
    for section in SECTION_IDS:
        if values.get(section) is not True:
            setting = str(origin(section)) if section in values else "built-in"
            out.sections.append(SectionRow(section, False, "built-in", setting))
            continue
        source = origin(section)
        path = override_path(section, source, workspace=workspace, peri_home=peri_home)
        inside = workspace if source.scope in WORKSPACE_SCOPES else None
        text, problem = read_override(path, inside=inside)
        if problem is not None:
            out.warnings.append(
                visible(
                    f"{source}: meta_harness.{section}: {path}: {problem}; the built-in "
                    f"{section!r} section is kept"
                )
            )
            out.sections.append(SectionRow(section, False, "built-in", str(source)))
            continue
        overridden.add(section)
        out.texts[section] = text
        out.sections.append(SectionRow(section, True, str(path), str(source)))
    disabled: set[str] = set()
    for cap in CAPABILITY_NAMES:
        on = values.get(cap, True) is not False
        if not on:
            disabled.add(cap)
        out.capabilities.append(SwitchRow(cap, on, _shown(cap, values, origin)))
    builtins = values.get(BUILTIN_SUBAGENTS, True) is not False
    out.builtin_subagents = SwitchRow(
        BUILTIN_SUBAGENTS, builtins, _shown(BUILTIN_SUBAGENTS, values, origin)
    )
    out.state = MetaState(frozenset(overridden), frozenset(disabled), builtins)
    return out


def _shown(name: str, values: Mapping[str, bool], origin: Callable[[str], Source]) -> str:
    return str(origin(name)) if name in values else "built-in"


def read_override(path: Path, *, inside: Path | None) -> tuple[str, str | None]:
    """(text, None) for a usable override file, ("", why not) otherwise."""
    try:
        raw = read_text(path, max_bytes=MAX_OVERRIDE_BYTES, inside=inside)
    except SafeReadError as e:
        return "", e.reason
    text = raw.replace("\r\n", "\n").strip()
    if not text:
        return "", "is empty"
    for number, line in enumerate(text.split("\n"), 1):
        heading = reserved_heading(line)
        if heading is not None:
            return "", f"line {number} would forge Peri's own {heading!r} heading (reserved)"
    return text, None


def reserved_heading(line: str) -> str | None:
    """The reserved heading `line` would pass for, if any (case and spacing ignored)."""
    words = " ".join(line.split()).lower()
    for heading in RESERVED_HEADINGS:
        if words == heading.lower() or words.startswith(heading.lower() + " "):
            return heading
    return None


def _unknown(name: str, source: Source) -> str:
    import difflib  # an unknown name is the only user: not imported at start

    near = difflib.get_close_matches(name.lower(), KNOWN_NAMES, n=1, cutoff=0.6)
    near += [k for k in KNOWN_NAMES if k.lower() == name.lower() and k not in near]
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return visible(
        f"{source}: meta_harness.{name}: unknown name{hint}; ignored. Sections: "
        f"{', '.join(SECTION_IDS)}; capabilities: {', '.join(CAPABILITY_NAMES)}; "
        f"and {BUILTIN_SUBAGENTS}"
    )


@dataclass
class MetaRegistry(ToolRegistry):
    """A session's tool registry that refuses what its Meta Harness state removed, whenever it
    is added (MCP tools arrive late): tools of a disabled capability, and any deferred tool while
    `deferred` is off."""

    meta: MetaState = ALL_ON

    def add(self, tool: Tool, *, deferred: bool | None = None) -> None:
        if deferred is None:
            deferred = tool.traits.deferred
        if self.meta.keeps_tool(tool, deferred=deferred):
            super().add(tool, deferred=deferred)
