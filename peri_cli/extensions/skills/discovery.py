"""Finding skills: the roots in precedence order, each root's folders scanned, and the catalog
built (the first root holding a name wins; anything wrong with one skill is a problem reported
once while the others load)."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from peri_cli.base.frontmatter import MAX_FRONT_MATTER_BYTES, locate_front_matter, parse_fields
from peri_cli.extensions.skills.catalog import Skill, SkillCatalog, SkillProblem, SkillRoot
from peri_cli.extensions.skills.fields import skill_from_fields
from peri_cli.extensions.skills.reading import Refused, os_reason, read_skill_file

BUILTIN_ROOT = Path(__file__).resolve().parent.parent.parent / "skills"
SKILL_FILE = "SKILL.md"
MAX_SKILLS_PER_ROOT = 500


def skill_roots(
    *,
    home: Path,
    peri_home: Path,
    workspace: Path,
    builtin: Path = BUILTIN_ROOT,
    plugins: Sequence[tuple[Path, str]] = (),
) -> list[SkillRoot]:
    """The roots in precedence order: personal before project (as Claude Code), then the
    plugins' folders (installed by the user: personal), built-in last."""
    return [
        SkillRoot(home / ".claude" / "skills", "personal", "~/.claude/skills"),
        SkillRoot(home / ".agents" / "skills", "personal", "~/.agents/skills"),
        SkillRoot(peri_home / "skills", "personal", "$PERI_HOME/skills"),
        SkillRoot(workspace / ".claude" / "skills", "project", ".claude/skills"),
        SkillRoot(workspace / ".agents" / "skills", "project", ".agents/skills"),
        *(SkillRoot(folder, "personal", label) for folder, label in plugins),
        SkillRoot(builtin, "builtin", "built-in"),
    ]


def load_skills(
    *,
    home: Path,
    peri_home: Path,
    workspace: Path,
    builtin: Path = BUILTIN_ROOT,
    plugins: Sequence[tuple[Path, str]] = (),
) -> SkillCatalog:
    """Discover every root for this workspace; never raises."""
    roots = skill_roots(
        home=home, peri_home=peri_home, workspace=workspace, builtin=builtin, plugins=plugins
    )
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
        return [problem(root.path, os_reason(e, root.path))]
    if not stat.S_ISDIR(st.st_mode):
        return [problem(root.path, "not a directory")]
    try:
        names = sorted(n for n in os.listdir(root.path) if not n.startswith("."))
    except OSError as e:
        return [problem(root.path, os_reason(e, root.path))]
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
            out.append(problem(folder, os_reason(e, folder)))
            continue
        path = folder / SKILL_FILE
        if not os.path.lexists(path):
            continue  # a folder without SKILL.md is not a skill
        try:
            out.append(_load_skill(path, root, inside))
        except Refused as e:
            out.append(problem(path, str(e)))
    return out


def _load_skill(
    path: Path, root: SkillRoot, inside: Path | None
) -> tuple[Skill, list[SkillProblem]]:
    data = read_skill_file(path, inside, limit=MAX_FRONT_MATTER_BYTES + 16)
    front_end, _ = locate_front_matter(data, complete=False)
    raw = data[:front_end]
    if b"\x00" in raw:
        raise Refused("binary file (contains NUL bytes)")
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        raise Refused("front matter is not valid UTF-8") from e
    fields = parse_fields(text.partition("\n")[2])
    warnings: list[SkillProblem] = []
    skill = skill_from_fields(fields, path, root, warnings, inside)
    return skill, warnings
