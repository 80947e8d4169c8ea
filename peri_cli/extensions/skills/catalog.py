"""What a skill is once found: its root, its parsed front matter, the problems met while finding
it, and the catalog of every skill with the rows `/skills` shows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from peri_cli.base.frontmatter import FrontMatterError, locate_front_matter
from peri_cli.base.safe_read import SafeReadError, read_bytes
from peri_cli.base.textsafe import visible

Scope = Literal["personal", "project", "builtin"]
Status = Literal["active", "shadowed", "broken"]

MAX_SKILL_BYTES = 256 * 1024  # a SKILL.md above this is refused unread (~64k tokens)


class SkillError(Exception):
    """A skill that cannot be loaded now; the message is one line for the user or the model."""


@dataclass(frozen=True)
class SkillRoot:
    """One folder of skill folders, with whose it is and how it is shown to the user."""

    path: Path
    scope: Scope
    label: str


@dataclass(frozen=True)
class SkillProblem:
    """Something wrong with one skill or root; `skipped` when the skill did not load."""

    path: Path
    source: str
    message: str
    skipped: bool = True

    def line(self) -> str:
        """One line for stderr or a TUI notice, file-derived text made visible."""
        verb = "skipped" if self.skipped else "loaded"
        return visible(f"skill {self.path} ({self.source}) {verb}: {self.message}").replace(
            "\n", " "
        )


@dataclass(frozen=True)
class Skill:
    """A skill found at start: its front matter, parsed; the body stays on disk until asked for."""

    name: str
    description: str
    path: Path
    root: SkillRoot
    allowed_tools: tuple[str, ...] = ()
    disable_model_invocation: bool = False
    user_invocable: bool = True
    argument_hint: str = ""
    arguments: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    confined_to: Path | None = None  # a project skill stays inside the workspace

    @property
    def directory(self) -> Path:
        return self.path.parent

    @property
    def scope(self) -> Scope:
        return self.root.scope

    @property
    def model_invocable(self) -> bool:
        return not self.disable_model_invocation

    @property
    def takes_positional(self) -> bool:
        """Whether `$0`, `$1`… are placeholders; otherwise they stay text (prices like `$5`)."""
        return bool(self.argument_hint or self.arguments)

    def granted_tools(self, *, trusted: bool) -> tuple[str, ...]:
        """The tools `allowed-tools` pre-approves while the skill runs: a repository's skill
        gets none until the user trusts the workspace."""
        return self.allowed_tools if trusted or self.scope != "project" else ()

    def load_body(self) -> str:
        """The text after the front matter, read now (it may have changed since discovery)."""
        where = f"skill {self.name} cannot be loaded from {self.path}"
        try:
            data = read_bytes(self.path, max_bytes=MAX_SKILL_BYTES, inside=self.confined_to)
            _, body_start = locate_front_matter(data, complete=True)
        except SafeReadError as e:
            raise SkillError(f"{where}: {e.reason}") from e
        except FrontMatterError as e:
            raise SkillError(f"{where}: {e}") from e
        return data[body_start:].decode("utf-8", errors="replace")


@dataclass(frozen=True)
class SkillEntry:
    """One row of `/skills`: a skill in force, one shadowed by an earlier root, or a broken one."""

    name: str
    description: str
    source: str
    scope: Scope
    path: Path
    status: Status
    shadowed_by: str | None = None
    problems: tuple[str, ...] = ()
    model_invocable: bool = False
    user_invocable: bool = False
    argument_hint: str = ""


@dataclass(frozen=True)
class SkillCatalog:
    """Every skill found: the ones in force (first root wins), the shadowed, and the problems."""

    skills: tuple[Skill, ...] = ()
    shadowed: tuple[tuple[Skill, Skill], ...] = ()  # (the shadowed skill, the one in force)
    problems: tuple[SkillProblem, ...] = ()
    _broken: tuple[tuple[str, SkillRoot, Path], ...] = ()

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)

    def for_model(self) -> list[Skill]:
        """Skills the model may load (and that the listing names)."""
        return [s for s in self.skills if s.model_invocable]

    def for_user(self) -> list[Skill]:
        """Skills the user may run as `/<name> [args]`."""
        return [s for s in self.skills if s.user_invocable]

    def warnings(self) -> list[str]:
        """Each problem once, as one line (stderr in headless, a notice in the TUI)."""
        return [p.line() for p in self.problems]

    def untrusted_grants(self) -> list[tuple[str, str]]:
        """(what, source) of each project skill's `allowed-tools`, for the trust dialog."""
        return [
            (f"skill {s.name} pre-approves {', '.join(s.allowed_tools)}", s.root.label)
            for s in self.skills
            if s.scope == "project" and s.allowed_tools
        ]

    def entries(self) -> list[SkillEntry]:
        """What `/skills` shows: in force, shadowed and broken, each with source and problems."""
        by_path: dict[Path, list[str]] = {}
        for p in self.problems:
            by_path.setdefault(p.path, []).append(p.message)
        rows = [_entry(s, "active", None, by_path) for s in self.skills]
        rows += [_entry(lost, "shadowed", won.root.label, by_path) for lost, won in self.shadowed]
        rows += [
            SkillEntry(
                name=name,
                description="",
                source=root.label,
                scope=root.scope,
                path=path,
                status="broken",
                problems=tuple(by_path.get(path, ())),
            )
            for name, root, path in self._broken
        ]
        return rows


def _entry(
    skill: Skill, status: Status, by: str | None, problems: dict[Path, list[str]]
) -> SkillEntry:
    return SkillEntry(
        name=skill.name,
        description=skill.description,
        source=skill.root.label,
        scope=skill.scope,
        path=skill.path,
        status=status,
        shadowed_by=by,
        problems=tuple(problems.get(skill.path, ())),
        model_invocable=skill.model_invocable,
        user_invocable=skill.user_invocable,
        argument_hint=skill.argument_hint,
    )
