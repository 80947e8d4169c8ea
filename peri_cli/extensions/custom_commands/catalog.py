"""What a custom command is once found: its source, its front matter, the names that reach it,
and the catalog that resolves `/name args` (built-ins, then skills, then project, then user, then
plugins; a shadowed command keeps its namespaced names)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from peri_cli.base.frontmatter import FrontMatterError, split_front_matter
from peri_cli.base.safe_read import SafeReadError, read_text
from peri_cli.base.textsafe import visible

Scope = Literal["project", "user", "plugin"]

MAX_COMMAND_BYTES = 256 * 1024  # a command file above this is refused unread (~64k tokens)


class CommandFileError(Exception):
    """A command file that cannot be used now; the message is one line naming the file."""


@dataclass(frozen=True, eq=False)
class CommandSource:
    """One folder of command files. `prefix` starts the qualified names of its commands
    (`project:review`, `user:review`, a plugin's `plugin:name`); `confined_to`: files must
    resolve inside it (a repository's commands stay in the workspace)."""

    root: Path
    scope: Scope
    label: str  # how the user knows the folder: ".claude/commands"
    prefix: str
    confined_to: Path | None = None
    # `${NAME}`s its files' text may use (a plugin's `${CLAUDE_PLUGIN_ROOT}`), filled in first.
    variables: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CommandProblem:
    """Something wrong with one file or folder; `verb` says what became of it ("skipped":
    no command came of it, "loaded": it loaded all the same, "cut short": a folder read in
    part)."""

    path: Path
    source: str
    message: str
    verb: Literal["skipped", "loaded", "cut short"] = "skipped"
    folder: bool = False

    def line(self) -> str:
        """One line for stderr or a TUI notice, file-derived text made visible."""
        what = "custom commands folder" if self.folder else "custom command"
        text = f"{what} {self.path} ({self.source}) {self.verb}: {self.message}"
        return visible(text).replace("\n", " ")


@dataclass(frozen=True)
class CustomCommand:
    """A command file found at start; its body is read again when it runs."""

    name: str  # the file's stem: `/name`
    folders: tuple[str, ...]  # the subfolders below the source's root
    source: CommandSource
    path: Path
    description: str
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()
    model: str | None = None

    @property
    def scope(self) -> Scope:
        return self.source.scope

    @property
    def namespaced(self) -> str | None:
        """`frontend:component` for `frontend/component.md` (None at the top of the root)."""
        return ":".join((*self.folders, self.name)) if self.folders else None

    @property
    def qualified(self) -> str:
        """The name no other command has: `project:frontend:component`, `user:review`."""
        return ":".join((self.source.prefix, *self.folders, self.name))

    @property
    def where(self) -> str:
        """Claude Code's label of its origin: `project`, `user:backend`, a plugin's name."""
        head = self.source.prefix if self.scope == "plugin" else self.scope
        return ":".join((head, *self.folders))

    @property
    def shown_path(self) -> str:
        """The file as the user knows it: `.claude/commands/frontend/component.md`."""
        return "/".join((self.source.label, *self.folders, self.path.name))

    def names(self) -> tuple[str, ...]:
        """Every name that may reach it, strongest first."""
        return tuple(n for n in (self.name, self.namespaced, self.qualified) if n)

    def granted_tools(self, *, trusted: bool) -> tuple[str, ...]:
        """What `allowed-tools` pre-approves while it runs: a repository's command gets none
        until the user trusts the workspace."""
        return self.allowed_tools if trusted or self.scope != "project" else ()

    def load_body(self) -> str:
        """The text after the front matter (the whole file without one), read now."""
        try:
            text = read_text(self.path, max_bytes=MAX_COMMAND_BYTES, inside=self.source.confined_to)
        except SafeReadError as e:
            raise CommandFileError(f"command /{self.name} ({self.path}): {e.reason}") from e
        if "\x00" in text:
            raise CommandFileError(f"command /{self.name} ({self.path}): binary file")
        if not text.lstrip("\ufeff").startswith("---"):
            return text
        try:
            return split_front_matter(text)[1]
        except FrontMatterError as e:
            raise CommandFileError(f"command /{self.name} ({self.path}): {e}") from e


@dataclass(frozen=True)
class CommandRow:
    """One command as `/help` and completion show it: the name to type, and what holds its
    plain name when that is not it."""

    call: str
    command: CustomCommand
    shadowed_by: str | None = None


@dataclass(frozen=True)
class CommandCatalog:
    """Every command found, in precedence order, and the names that reach each."""

    commands: tuple[CustomCommand, ...] = ()
    problems: tuple[CommandProblem, ...] = ()
    # Plain names a built-in command or a skill holds, with what holds it.
    reserved: Mapping[str, str] = field(default_factory=dict)
    _names: dict[str, CustomCommand] = field(default_factory=dict, init=False, compare=False)

    def __post_init__(self) -> None:
        for command in self.commands:
            for name in command.names():
                if name not in self.reserved:
                    self._names.setdefault(name, command)

    def find(self, text: str) -> tuple[CustomCommand, str] | None:
        """(the command, its arguments) for `/name args`; None when `name` reaches none (a
        built-in or a skill holds it, or it is text: a path, an unknown word)."""
        if not text.startswith("/") or not text[1:2].strip():
            return None
        name, *rest = text[1:].split(maxsplit=1)
        found = self._names.get(name)
        return (found, rest[0].strip() if rest else "") if found is not None else None

    def rows(self) -> list[CommandRow]:
        """Each command once, with the strongest name that reaches it."""
        rows: list[CommandRow] = []
        for command in self.commands:
            mine = [n for n in command.names() if self._names.get(n) is command]
            call = mine[0] if mine else command.qualified
            holder = None
            if call != command.name:
                other = self._names.get(command.name)
                holder = self.reserved.get(command.name) or (_held(other) if other else None)
            rows.append(CommandRow(call, command, holder))
        return rows

    def warnings(self) -> list[str]:
        return [p.line() for p in self.problems]

    def untrusted_grants(self) -> list[tuple[str, str]]:
        """(what, source) of each project command's `allowed-tools`, for the trust question."""
        return [
            (f"command /{c.name} pre-approves {', '.join(c.allowed_tools)}", c.shown_path)
            for c in self.commands
            if c.scope == "project" and c.allowed_tools
        ]


def _held(command: CustomCommand) -> str:
    owner = {"project": "the project's", "user": "your"}.get(command.scope, command.where + "'s")
    return f"{owner} /{command.name}"
