"""Skills: `<root>/<name>/SKILL.md` files found at start, listed by name and description in the
frozen prompt, and loaded whole only when the model or the user asks for one.

A skill folder may come from a cloned repository, so every file is untrusted: only regular files
are read, with a size cap, front matter is parsed by PyYAML's safe loader after a scan that refuses
anchors, aliases and deep nesting, and anything wrong with one skill is a problem reported once
while the others load.
"""

from __future__ import annotations

import errno
import os
import re
import shlex
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from peri_cli.base.frontmatter import (
    MAX_FRONT_MATTER_BYTES,
    FrontMatterError,
    locate_front_matter,
    parse_fields,
)
from peri_cli.base.safe_read import SafeReadError, is_inside, read_bytes, resolved
from peri_cli.base.textsafe import visible
from peri_cli.context.estimate import estimate_tokens

Scope = Literal["personal", "project", "builtin"]
Status = Literal["active", "shadowed", "broken"]

BUILTIN_ROOT = Path(__file__).resolve().parent.parent / "skills"
SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 256 * 1024  # a SKILL.md above this is refused unread (~64k tokens)
MAX_SKILLS_PER_ROOT = 500
LISTING_SHARE = 0.02  # of the context window, for the listing in the frozen prompt
MIN_LISTED_DESCRIPTION = 40  # below this, names alone are listed
MAX_LISTED_DESCRIPTION = 2000

LISTING_HEADING = "# Skills"
LISTING_INTRO = (
    "Skills hold instructions for particular tasks. When one applies, load it with the Skill "
    "tool before you act; files it mentions sit beside its SKILL.md."
)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_KNOWN_FIELDS = frozenset(
    {
        "name",
        "description",
        "allowed-tools",
        "disable-model-invocation",
        "user-invocable",
        "argument-hint",
        "arguments",
    }
)


class SkillError(Exception):
    """A skill that cannot be loaded now; the message is one line for the user or the model."""


# Every refusal while reading a skill, the front matter's own included.
_Refused = FrontMatterError


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
        except _Refused as e:
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


# --- roots and discovery -----------------------------------------------------------------------


def skill_roots(
    *, home: Path, peri_home: Path, workspace: Path, builtin: Path = BUILTIN_ROOT
) -> list[SkillRoot]:
    """The roots in precedence order: personal before project (as Claude Code), built-in last."""
    return [
        SkillRoot(home / ".claude" / "skills", "personal", "~/.claude/skills"),
        SkillRoot(home / ".agents" / "skills", "personal", "~/.agents/skills"),
        SkillRoot(peri_home / "skills", "personal", "$PERI_HOME/skills"),
        SkillRoot(workspace / ".claude" / "skills", "project", ".claude/skills"),
        SkillRoot(workspace / ".agents" / "skills", "project", ".agents/skills"),
        SkillRoot(builtin, "builtin", "built-in"),
    ]


def load_skills(
    *, home: Path, peri_home: Path, workspace: Path, builtin: Path = BUILTIN_ROOT
) -> SkillCatalog:
    """Discover every root for this workspace; never raises."""
    roots = skill_roots(home=home, peri_home=peri_home, workspace=workspace, builtin=builtin)
    return discover_skills(roots, workspace=workspace)


def discover_skills(roots: Sequence[SkillRoot], *, workspace: Path | None) -> SkillCatalog:
    """Read each root's skills' front matter; the first root holding a name wins. A root that
    resolves to one already seen (a workspace that is the home folder) is read once."""
    active: dict[str, Skill] = {}
    shadowed: list[tuple[Skill, Skill]] = []
    problems: list[SkillProblem] = []
    broken: list[tuple[str, SkillRoot, Path]] = []
    seen_roots: set[str] = set()
    for root in roots:
        real_root = os.path.realpath(root.path)
        if real_root in seen_roots:
            continue
        seen_roots.add(real_root)
        names_here: set[str] = set()
        for item in _scan_root(root, workspace if root.scope == "project" else None):
            if isinstance(item, SkillProblem):
                problems.append(item)
                if item.skipped and item.path != root.path:  # a skill folder or its SKILL.md
                    folder = item.path.parent if item.path.name == SKILL_FILE else item.path
                    broken.append((folder.name, root, item.path))
                continue
            skill, warnings = item
            problems.extend(warnings)
            if skill.name in names_here:
                problems.append(
                    SkillProblem(
                        skill.path,
                        root.label,
                        f"duplicate name {skill.name!r} in this folder; the first one is used",
                    )
                )
                broken.append((skill.name, root, skill.path))
            elif skill.name in active:
                shadowed.append((skill, active[skill.name]))
            else:
                active[skill.name] = skill
            names_here.add(skill.name)
    return SkillCatalog(tuple(active.values()), tuple(shadowed), tuple(problems), tuple(broken))


def _scan_root(
    root: SkillRoot, inside: Path | None
) -> list[SkillProblem | tuple[Skill, list[SkillProblem]]]:
    def problem(path: Path, message: str) -> SkillProblem:
        return SkillProblem(path, root.label, message)

    try:
        st = os.stat(root.path)
    except FileNotFoundError:
        return []  # most roots do not exist
    except OSError as e:
        return [problem(root.path, _os_reason(e, root.path))]
    if not stat.S_ISDIR(st.st_mode):
        return [problem(root.path, "not a directory")]
    try:
        names = sorted(n for n in os.listdir(root.path) if not n.startswith("."))
    except OSError as e:
        return [problem(root.path, _os_reason(e, root.path))]
    out: list[SkillProblem | tuple[Skill, list[SkillProblem]]] = []
    if len(names) > MAX_SKILLS_PER_ROOT:
        out.append(
            problem(
                root.path,
                f"more than {MAX_SKILLS_PER_ROOT} entries; only the first "
                f"{MAX_SKILLS_PER_ROOT} (by name) were looked at",
            )
        )
        names = names[:MAX_SKILLS_PER_ROOT]
    for name in names:
        folder = root.path / name
        try:
            if not stat.S_ISDIR(os.stat(folder).st_mode):
                continue  # a plain file beside the skill folders
        except OSError as e:
            out.append(problem(folder, _os_reason(e, folder)))
            continue
        path = folder / SKILL_FILE
        if not os.path.lexists(path):
            continue  # a folder without SKILL.md is not a skill
        try:
            out.append(_load_skill(path, root, inside))
        except _Refused as e:
            out.append(problem(path, str(e)))
    return out


def _load_skill(
    path: Path, root: SkillRoot, inside: Path | None
) -> tuple[Skill, list[SkillProblem]]:
    data = _read_skill_file(path, inside, limit=MAX_FRONT_MATTER_BYTES + 16)
    front_end, _ = locate_front_matter(data, complete=False)
    raw = data[:front_end]
    if b"\x00" in raw:
        raise _Refused("binary file (contains NUL bytes)")
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        raise _Refused("front matter is not valid UTF-8") from e
    fields = parse_fields(text.partition("\n")[2])
    warnings: list[SkillProblem] = []
    skill = _skill_from_fields(fields, path, root, warnings, inside)
    return skill, warnings


def _read_skill_file(path: Path, inside: Path | None, *, limit: int) -> bytes:
    """A SKILL.md's first `limit` bytes; with `inside`, only if it resolves inside that folder,
    and the resolved file is what is opened (a symlink swapped in later is not followed)."""
    if inside is None:
        return _read_regular(path, limit=limit, file_cap=MAX_SKILL_BYTES)
    real = resolved(path)
    if not is_inside(real, inside):
        raise _Refused(f"resolves outside the workspace (to {real}); not read")
    return _read_regular(real, limit=limit, file_cap=MAX_SKILL_BYTES, nofollow=True)


# --- reading and parsing one file --------------------------------------------------------------


def _read_regular(path: Path, *, limit: int, file_cap: int, nofollow: bool = False) -> bytes:
    """At most `limit` bytes of the regular file `path`, refused unread if over `file_cap`:
    discovery reads only the front matter, which `safe_read.read_bytes` (whole files) cannot.

    TODO: a prefix option in `peri_cli.base.safe_read` would let this go.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS | (getattr(os, "O_NOFOLLOW", 0) if nofollow else 0))
    except OSError as e:
        raise _Refused(_os_reason(e, path)) from e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO, socket or device"
            raise _Refused(f"is {kind}, not a regular file; not read")
        if st.st_size > file_cap:
            raise _Refused(f"is larger than {file_cap // 1024} KiB ({st.st_size} bytes); not read")
        chunks: list[bytes] = []
        total = 0
        while total < limit and (chunk := os.read(fd, min(1 << 16, limit - total))):
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)
    except OSError as e:
        raise _Refused(_os_reason(e, path)) from e
    finally:
        os.close(fd)


def _os_reason(e: OSError, path: Path) -> str:
    if e.errno == errno.ELOOP:
        return "symlink loop"
    if isinstance(e, FileNotFoundError):
        return "broken symlink" if os.path.islink(path) else "file not found"
    if isinstance(e, PermissionError):
        return "permission denied"
    if e.errno == errno.ENXIO:
        return "is a socket or device, not a regular file; not read"
    return f"cannot read ({e.strerror or e})"


def _skill_from_fields(
    fields: dict[str, Any],
    path: Path,
    root: SkillRoot,
    warnings: list[SkillProblem],
    confined_to: Path | None,
) -> Skill:
    def warn(message: str) -> None:
        warnings.append(SkillProblem(path, root.label, message, skipped=False))

    name = fields.get("name", path.parent.name)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise _Refused(
            f"invalid name {name!r}: use letters, digits, '-', '_', '.', ':' (at most 64)"
        )
    description = fields.get("description")
    if not isinstance(description, str):
        what = "missing" if description is None else "not text"
        raise _Refused(f"the required field 'description' is {what}")
    if not description.strip():
        raise _Refused("the required field 'description' is empty")
    return Skill(
        name=name,
        description=description.strip(),
        path=path,
        root=root,
        allowed_tools=_word_list(fields.get("allowed-tools"), "allowed-tools", warn),
        disable_model_invocation=_flag(fields, "disable-model-invocation", False, warn),
        user_invocable=_flag(fields, "user-invocable", True, warn),
        argument_hint=_hint(fields.get("argument-hint"), warn),
        arguments=_word_list(fields.get("arguments"), "arguments", warn),
        extra={k: v for k, v in fields.items() if k not in _KNOWN_FIELDS},
        confined_to=confined_to,
    )


def _flag(fields: dict[str, Any], key: str, default: bool, warn: Callable[[str], None]) -> bool:
    value = fields.get(key, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    warn(f"'{key}' should be true or false, not {value!r}; using {str(default).lower()}")
    return default


def _word_list(value: object, key: str, warn: Callable[[str], None]) -> tuple[str, ...]:
    """A YAML list, or a string split on commas and on spaces outside parentheses (so
    `Bash(git add:*) Read` is two entries)."""
    if value is None:
        return ()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    if isinstance(value, str):
        return tuple(_split_outside_parens(value))
    warn(f"'{key}' should be a list or a comma-separated string; ignored")
    return ()


def _split_outside_parens(text: str) -> list[str]:
    words, current, depth = [], "", 0
    for ch in text:
        if ch in ",\n\t " and depth == 0:
            if current.strip():
                words.append(current.strip())
            current = ""
            continue
        depth += (ch == "(") - (ch == ")" and depth > 0)
        current += ch
    if current.strip():
        words.append(current.strip())
    return words


def _hint(value: object, warn: Callable[[str], None]) -> str:
    """`argument-hint: [issue]` is a YAML list; the author meant the text `[issue]`."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return " ".join(f"[{v}]" for v in value)
    warn("'argument-hint' should be text; ignored")
    return ""


# --- the listing in the frozen prompt ----------------------------------------------------------


@dataclass(frozen=True)
class SkillListing:
    """The `# Skills` section of the frozen prompt ("" when no skill is offered to the model)."""

    text: str
    shown: tuple[str, ...] = ()
    shortened: int = 0
    omitted: int = 0


def skill_listing(
    catalog: SkillCatalog,
    context_window: int,
    *,
    count: Callable[[str], int] = estimate_tokens,
    share: float = LISTING_SHARE,
) -> SkillListing:
    """Name and description of each skill the model may load, within `share` of the window in
    tokens: the longest descriptions are shortened first, then (rarely) descriptions dropped,
    then skills, each step said in a note."""
    skills = catalog.for_model()
    if not skills:
        return SkillListing("")
    budget = max(1, int(context_window * share))
    names = [s.name for s in skills]
    full = [_one_line(s.description) for s in skills]
    descriptions = [_shorten(d, MAX_LISTED_DESCRIPTION) for d in full]

    def render(limit: int | None, keep: int) -> tuple[str, int]:
        shown = [_shorten(d, limit) for d in descriptions[:keep]]
        cut = sum(1 for s, d in zip(shown, full, strict=False) if s != d)
        return _render_listing(names[:keep], shown, cut, len(names) - keep, limit == 0), cut

    text, cut = render(None, len(names))
    if count(text) <= budget:
        return SkillListing(text, tuple(names), shortened=cut)
    longest = max(len(d) for d in descriptions)
    limit = _largest(
        MIN_LISTED_DESCRIPTION, longest, lambda n: count(render(n, len(names))[0]) <= budget
    )
    if limit is not None:
        text, cut = render(limit, len(names))
        return SkillListing(text, tuple(names), shortened=cut)
    keep = _largest(0, len(names), lambda k: count(render(0, k)[0]) <= budget) or 0
    text, cut = render(0, keep)
    return SkillListing(text, tuple(names[:keep]), shortened=cut, omitted=len(names) - keep)


def _largest(low: int, high: int, fits: Callable[[int], bool]) -> int | None:
    """The largest n in [low, high] for which `fits(n)` (monotone), or None if not even `low`."""
    if not fits(low):
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _one_line(text: str) -> str:
    return visible(" ".join(text.split()))


def _shorten(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    if limit == 0:
        return ""
    return text[: limit - 1].rstrip() + "…"


def _render_listing(
    names: list[str], descriptions: list[str], cut: int, omitted: int, names_only: bool
) -> str:
    lines = [LISTING_HEADING, LISTING_INTRO]
    lines += [f"- {n}: {d}" if d else f"- {n}" for n, d in zip(names, descriptions, strict=True)]
    if names_only:
        lines.append(
            "(Descriptions are left out for space; the Skill tool returns a skill's text.)"
        )
    elif cut:
        lines.append(
            f"({cut} description{'s were' if cut > 1 else ' was'} shortened to fit; "
            "the Skill tool returns a skill's full text.)"
        )
    if omitted:
        lines.append(f"({omitted} more skills are installed but not listed, for space.)")
    return "\n".join(lines)


# --- `/<name> [args]` and argument substitution ------------------------------------------------


@dataclass(frozen=True)
class SkillInvocation:
    """A user's `/<name> [args]`: the skill, its arguments and the message to send the model."""

    skill: Skill
    arguments: str
    message: str


def invoke_user_skill(catalog: SkillCatalog, text: str) -> SkillInvocation | None:
    """The message for `/<name> [args]` when `name` is a user-invocable skill, else None (the
    caller then treats the text as usual). Raises SkillError if the skill cannot be read now."""
    if not text.startswith("/"):
        return None
    parts = text[1:].split(maxsplit=1)
    if not parts:
        return None
    skill = catalog.get(parts[0])
    if skill is None or not skill.user_invocable:
        return None
    arguments = parts[1].strip() if len(parts) > 1 else ""
    return SkillInvocation(skill, arguments, skill_message(skill, skill.load_body(), arguments))


def skill_message(skill: Skill, body: str, arguments: str) -> str:
    """What the model reads for a loaded skill: where it lives, then its expanded body."""
    expanded = expand_arguments(
        body.lstrip("\n"),
        arguments,
        directory=skill.directory,
        positional=skill.takes_positional,
        names=skill.arguments,
    )
    return (
        f'Skill "{skill.name}" ({skill.root.label}). Base directory for this skill: '
        f"{skill.directory}\nPaths it mentions are relative to that directory; read them with "
        f"the usual tools.\n\n{expanded}"
    )


def expand_arguments(
    body: str,
    arguments: str,
    *,
    directory: Path,
    positional: bool = False,
    names: Sequence[str] = (),
) -> str:
    """Claude Code's substitutions, in one pass (a value is never expanded again): `$ARGUMENTS`,
    `$ARGUMENTS[N]`, and, when the skill declares arguments, `$N` and `$<name>`; plus
    `${CLAUDE_SKILL_DIR}`. Missing positions become empty. Arguments that no placeholder took
    are appended as `ARGUMENTS: …`, so they are never lost."""
    try:
        words = shlex.split(arguments)
    except ValueError:  # an unbalanced quote: plain words then
        words = arguments.split()
    alternatives = [r"\$\{CLAUDE_SKILL_DIR\}", r"\$ARGUMENTS\[(?P<index>\d+)\]", r"\$ARGUMENTS\b"]
    if positional:
        alternatives.append(r"\$(?P<pos>\d+)")
    if names:
        by_length = sorted(names, key=len, reverse=True)
        named = "|".join(re.escape(n) for n in by_length)
        alternatives.append(rf"\$(?P<named>{named})(?![\w-])")
    used = False

    def substitute(m: re.Match[str]) -> str:
        nonlocal used
        token = m.group(0)
        if token == "${CLAUDE_SKILL_DIR}":
            return str(directory)
        used = True
        if token == "$ARGUMENTS":
            return arguments
        index = m.groupdict().get("index") or m.groupdict().get("pos")
        if index is not None:
            return words[int(index)] if int(index) < len(words) else ""
        named = m.groupdict().get("named")
        i = list(names).index(named) if named is not None else len(words)
        return words[i] if i < len(words) else ""

    expanded = re.sub("|".join(alternatives), substitute, body)
    if arguments and not used:
        expanded = expanded.rstrip("\n") + f"\n\nARGUMENTS: {arguments}"
    return expanded
