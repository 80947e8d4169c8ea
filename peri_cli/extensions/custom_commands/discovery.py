"""Finding custom commands: the sources in precedence order (project, user; plugins append
theirs), each folder walked with caps, each file's front matter read from its head. A file or
folder that cannot be used is a problem naming it; the others load."""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, Literal

from peri_cli.base.frontmatter import (
    MAX_FRONT_MATTER_BYTES,
    FrontMatterError,
    locate_front_matter,
    parse_fields,
)
from peri_cli.base.safe_read import SafeReadError, is_inside, read_head, resolved
from peri_cli.extensions.custom_commands.catalog import (
    MAX_COMMAND_BYTES,
    CommandCatalog,
    CommandProblem,
    CommandSource,
    CustomCommand,
)
from peri_cli.extensions.custom_commands.expansion import fill_variables
from peri_cli.extensions.skills.fields import hint_text, word_list

COMMANDS_SUBDIR = Path(".claude") / "commands"
MAX_COMMANDS_PER_SOURCE = 500
MAX_DEPTH = 4  # subfolders below a source's root
MAX_ENTRIES = 5000  # folder entries looked at per source, files and folders alike
_HEAD_BYTES = MAX_FRONT_MATTER_BYTES + 4096  # the front matter and the body's first lines
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_MAX_DESCRIPTION = 200
Verb = Literal["skipped", "loaded", "cut short"]


def command_sources(*, home: Path, workspace: Path) -> list[CommandSource]:
    """The sources in precedence order: the project's before the user's (Claude Code's order)."""
    return [
        CommandSource(
            workspace / COMMANDS_SUBDIR, "project", str(COMMANDS_SUBDIR), "project", workspace
        ),
        CommandSource(home / COMMANDS_SUBDIR, "user", f"~/{COMMANDS_SUBDIR}", "user"),
    ]


def load_commands(
    *,
    home: Path,
    workspace: Path,
    builtins: Collection[str] = (),
    skills: Collection[str] = (),
    extra: Sequence[CommandSource] = (),
) -> CommandCatalog:
    """Every command of this workspace (`extra`: later sources, a plugin's); never raises.
    `builtins` and `skills` hold their plain names before any command."""
    sources = [*command_sources(home=home, workspace=workspace), *extra]
    if resolved(sources[0].root) == resolved(sources[1].root):  # the workspace is the home
        sources.pop(1)
    reserved = {n: f"the skill /{n}" for n in skills} | {n: f"the built-in /{n}" for n in builtins}
    commands: list[CustomCommand] = []
    problems: list[CommandProblem] = []
    for source in sources:
        _discover(source, commands, problems)
    return CommandCatalog(tuple(commands), tuple(problems), reserved)


def _discover(
    source: CommandSource, commands: list[CustomCommand], problems: list[CommandProblem]
) -> None:
    def problem(path: Path, message: str, verb: Verb = "skipped", folder: bool = False) -> None:
        problems.append(CommandProblem(path, source.label, message, verb, folder))

    root = source.root
    if not os.path.lexists(root):
        return
    if source.confined_to is not None and not is_inside(root, source.confined_to):
        problem(root, f"resolves outside the workspace (to {resolved(root)})", folder=True)
        return
    found = 0
    for path, folders in _walk(source, problem):
        if found == MAX_COMMANDS_PER_SOURCE:
            more = f"holds more than {MAX_COMMANDS_PER_SOURCE} commands; the rest are not read"
            problem(root, more, "cut short", folder=True)
            return
        warnings: list[str] = []
        try:
            command = _read_command(path, folders, source, warnings)
        except FrontMatterError as e:
            problem(path, str(e))
            continue
        for message in warnings:
            problem(path, message, "loaded")
        commands.append(command)
        found += 1


def _walk(
    source: CommandSource, problem: Callable[..., None]
) -> Iterator[tuple[Path, tuple[str, ...]]]:
    """The `.md` files below the root, each folder's files before its subfolders, in name
    order; a folder is entered once however it is reached (a symlink loop ends)."""
    seen: set[Path] = set()
    budget = MAX_ENTRIES
    pending: list[tuple[Path, tuple[str, ...]]] = [(source.root, ())]
    while pending:
        folder, folders = pending.pop(0)
        real = resolved(folder)
        if real in seen:
            continue
        seen.add(real)
        try:
            with os.scandir(folder) as listing:  # a huge folder is not read to its end
                entries = sorted(islice(listing, max(budget, 0) + 1), key=lambda e: e.name)
        except OSError as e:
            problem(folder, f"cannot be listed ({e.strerror or e})", folder=True)
            continue
        subfolders: list[tuple[Path, tuple[str, ...]]] = []
        for entry in entries:
            budget -= 1
            if budget < 0:
                more = f"has more than {MAX_ENTRIES} entries; the rest are not read"
                problem(source.root, more, "cut short", folder=True)
                return
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            if _is_dir(entry):
                why = _unusable_folder(path, folders, source)
                if why:
                    problem(path, why, folder=True)
                else:
                    subfolders.append((path, (*folders, entry.name)))
            elif entry.name.endswith(".md"):
                yield path, folders
        pending[:0] = subfolders


def _unusable_folder(path: Path, folders: tuple[str, ...], source: CommandSource) -> str:
    if source.confined_to is not None and not is_inside(path, source.confined_to):
        return f"resolves outside the workspace (to {resolved(path)})"
    if len(folders) >= MAX_DEPTH:
        return f"is nested more than {MAX_DEPTH} folders deep"
    if not _NAME.fullmatch(path.name):
        return "its name cannot be part of a command name (letters, digits, '-', '_', '.')"
    return ""


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # a symlink to a folder counts (the user's dotfiles often are)
    except OSError:
        return False


def _read_command(
    path: Path, folders: tuple[str, ...], source: CommandSource, warnings: list[str]
) -> CustomCommand:
    """One command from its file's head; FrontMatterError says why it cannot be one."""
    name = path.name.removesuffix(".md")
    if not _NAME.fullmatch(name):
        raise FrontMatterError(
            f"{name!r} cannot be typed as a command: use letters, digits, '-', '_', '.' "
            "(at most 64)"
        )
    data = _head(path, source)
    if b"\x00" in data:
        raise FrontMatterError("binary file (contains NUL bytes); not read")
    fields: dict[str, Any] = {}
    body = data
    if data.lstrip(b"\xef\xbb\xbf").startswith(b"---"):
        end, body_start = locate_front_matter(data, complete=len(data) < _HEAD_BYTES)
        fields = parse_fields(_decoded(data[:end], final=True).partition("\n")[2])
        body = data[body_start:]
    first_line = _first_line(_decoded(body, final=len(data) < _HEAD_BYTES))
    return CustomCommand(
        name=name,
        folders=folders,
        source=source,
        path=path,
        description=_text(fields, "description", warnings) or first_line,
        argument_hint=hint_text(fields.get("argument-hint"), warnings.append),
        # filled in as the `!` lines are, so a rule can name the plugin's own script
        allowed_tools=tuple(
            fill_variables(rule, source.variables)
            for rule in word_list(fields.get("allowed-tools"), "allowed-tools", warnings.append)
        ),
        model=_text(fields, "model", warnings) or None,
    )


def _head(path: Path, source: CommandSource) -> bytes:
    """The file's first bytes; a file over the cap is refused unread."""
    try:
        data, more = read_head(path, _HEAD_BYTES, inside=source.confined_to)
        if more and os.stat(path).st_size > MAX_COMMAND_BYTES:
            size = os.stat(path).st_size
            raise FrontMatterError(
                f"is larger than {MAX_COMMAND_BYTES // 1024} KiB ({size} bytes); not read"
            )
    except SafeReadError as e:
        reason = "broken symlink" if e.missing and os.path.islink(path) else e.reason
        raise FrontMatterError(reason) from e
    except OSError as e:
        raise FrontMatterError(f"cannot read ({e.strerror or e})") from e
    return data


def _decoded(data: bytes, *, final: bool) -> str:
    """UTF-8 text (a character cut at the end of a head is dropped); refused otherwise."""
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(data, final=final)
    except UnicodeDecodeError as e:
        raise FrontMatterError("not valid UTF-8; not read") from e
    return text.removeprefix("\ufeff")


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text[:_MAX_DESCRIPTION]
    return ""


def _text(fields: dict[str, Any], key: str, warnings: list[str]) -> str:
    value = fields.get(key)
    if value is None:
        return ""
    if isinstance(value, str):
        return " ".join(value.split())
    warnings.append(f"'{key}' should be text, not {type(value).__name__}; ignored")
    return ""
