"""Output styles, as Claude Code keeps them: the built-ins (`builtin_styles`) and Markdown files
with optional front matter (`name`, `description`, `keep-coding-instructions`) read from a list of
sources, the project's `.claude/output-styles/` and the user's `~/.claude/output-styles/` (a plugin
adds its folder as one more source). The `outputStyle` setting picks one for new sessions; it
becomes part of their frozen prompt (`context/snapshot.py`).

A project's files are a repository's: confined to the workspace, read through `safe_read`, and a
file that cannot be used is skipped with one line naming it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from peri_cli.base.frontmatter import FrontMatterError, split_front_matter
from peri_cli.base.safe_read import SafeReadError, read_text
from peri_cli.base.settings import LOCAL_SETTINGS_FILE
from peri_cli.base.textsafe import visible
from peri_cli.extensions.builtin_styles import BUILTIN_STYLES, DEFAULT_NAME, OutputStyle
from peri_cli.permissions.rulefile import _project_folder, edit_settings_file, ensure_git_ignored

MAX_STYLE_BYTES = 64 * 1024  # the style goes into every request of a session
MAX_STYLE_FILES = 200  # per folder: a repository with thousands must not slow every start
MAX_NAME_CHARS = 100
STYLES_DIR = Path(".claude") / "output-styles"

__all__ = ["BUILTIN_STYLES", "DEFAULT_NAME", "OutputStyle", "StyleCatalog", "StyleSource"]


class StyleError(Exception):
    """A style file that cannot be used; the message says why in a phrase."""


@dataclass(frozen=True)
class StyleSource:
    """A folder of `*.md` styles and the name its styles are listed under."""

    folder: Path
    source: str  # "project", "user", "plugin:<name>"
    inside: Path | None = None  # a repository's folder: files must resolve inside it


@dataclass(frozen=True)
class StyleCatalog:
    styles: tuple[OutputStyle, ...]  # in force: the built-ins, then each source's, by name
    problems: tuple[str, ...] = field(default_factory=tuple)  # skipped files, shadowed names

    def find(self, name: str) -> OutputStyle | None:
        """The style of that name, case-insensitively (`/output-style explanatory`)."""
        wanted = name.strip().casefold()
        return next((s for s in self.styles if s.name.casefold() == wanted), None)

    @property
    def default(self) -> OutputStyle:
        return self.styles[0]


def style_sources(workspace: Path, home: Path) -> list[StyleSource]:
    """Claude Code's folders, in precedence order after the built-ins: project, then user."""
    return [
        StyleSource(workspace / STYLES_DIR, "project", inside=workspace),
        StyleSource(home / STYLES_DIR, "user"),
    ]


def load_styles(sources: Iterable[StyleSource]) -> StyleCatalog:
    """The built-ins and every readable style of `sources`; on a name clash the earlier wins
    (built-ins, then the sources in order) and the later is named in `problems`."""
    styles: dict[str, OutputStyle] = {s.name.casefold(): s for s in BUILTIN_STYLES}
    problems: list[str] = []
    for source in sources:
        for path in _style_files(source.folder, problems):
            try:
                style = read_style(path, source)
            except StyleError as e:
                problems.append(f"output style {path}: {e}; skipped")
                continue
            taken = styles.get(style.name.casefold())
            if taken is not None:
                where = taken.path if taken.path is not None else "the built-in style"
                problems.append(
                    f"output style {path}: the name {style.name!r} is taken by {where}; skipped"
                )
                continue
            styles[style.name.casefold()] = style
    return StyleCatalog(tuple(styles.values()), tuple(visible(p) for p in problems))


def _style_files(folder: Path, problems: list[str]) -> list[Path]:
    try:
        found = sorted(p for p in folder.iterdir() if p.name.endswith(".md"))
    except FileNotFoundError:
        return []
    except OSError as e:
        problems.append(f"output styles {folder}: cannot list ({e.strerror or e}); skipped")
        return []
    if len(found) > MAX_STYLE_FILES:
        problems.append(
            f"output styles {folder}: {len(found)} files, only the first {MAX_STYLE_FILES} read"
        )
    return found[:MAX_STYLE_FILES]


def read_style(path: Path, source: StyleSource) -> OutputStyle:
    """One style file; StyleError for anything that keeps it from being used."""
    try:
        text = read_text(path, max_bytes=MAX_STYLE_BYTES, inside=source.inside)
    except SafeReadError as e:
        raise StyleError(e.reason) from e
    fields: dict[str, Any] = {}
    body = text
    if text.startswith("---"):
        try:
            fields, body = split_front_matter(text)
        except FrontMatterError as e:
            raise StyleError(str(e)) from e
    return OutputStyle(
        name=_name(fields.get("name"), path),
        description=_text_field(fields, "description"),
        body=body.strip(),
        keep_coding=_flag(fields.get("keep-coding-instructions", False)),
        source=source.source,
        path=path,
    )


def _name(value: object, path: Path) -> str:
    if value is None:
        value = path.name.removesuffix(".md")
    if not isinstance(value, str):
        raise StyleError("name must be text")
    name = value.strip()
    if not name:
        raise StyleError("name is empty")
    if visible(name) != name or "\n" in name or len(name) > MAX_NAME_CHARS:
        raise StyleError(f"name must be one line of at most {MAX_NAME_CHARS} printable characters")
    return name


def _text_field(fields: dict[str, Any], key: str) -> str:
    value = fields.get(key, "")
    if not isinstance(value, str):
        raise StyleError(f"{key} must be text")
    return " ".join(value.split())


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise StyleError("keep-coding-instructions must be true or false")
    return value


def choose_style(catalog: StyleCatalog, setting: str | None) -> tuple[OutputStyle, str | None]:
    """The style `outputStyle` names (none: the default), and a warning when no style has that
    name (the default is used then)."""
    if setting is None or not setting.strip():
        return catalog.default, None
    style = catalog.find(setting)
    if style is not None:
        return style, None
    names = ", ".join(s.name for s in catalog.styles)
    return catalog.default, visible(
        f"outputStyle {setting!r} is not an output style here ({names}); using the default"
    )


def save_output_style(workspace: Path, name: str) -> Path:
    """Set `outputStyle` in the workspace's `.peri/settings.local.json` (personal, git-ignored),
    where Claude Code saves its choice too; return the file's path. RuleFileError otherwise."""
    folder = _project_folder(workspace)
    path = folder / LOCAL_SETTINGS_FILE

    def change(data: dict[str, Any]) -> None:
        data["outputStyle"] = name

    edit_settings_file(path, change)
    ensure_git_ignored(folder)
    return path
