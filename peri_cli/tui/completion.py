"""What the prompt can complete: slash commands (built in, skills, custom commands, MCP prompts)
and `@path`s of workspace files. Pure but for the one directory walk, which is cached."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from peri_cli.agent.host import ExtraCommand
from peri_cli.base.textsafe import visible
from peri_cli.extensions.commands import COMMANDS

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".tox",
        "dist",
        "build",
        ".idea",
        ".peri",
    }
)
MAX_FILES = 20_000
MAX_SHOWN = 12
_AT_TOKEN = re.compile(r"(?:^|(?<=\s))@(\S*)$")


@dataclass(frozen=True)
class Candidate:
    """`replacement` replaces text[start:end] of the prompt when chosen."""

    label: str
    description: str
    replacement: str
    start: int
    end: int


MAX_DESCRIPTION = 80  # characters of a skill's or prompt's description in the menu


def slash_candidates(text: str, extra: Sequence[ExtraCommand] = ()) -> list[Candidate]:
    """Commands whose name starts with what follows the `/`, while the name is being typed:
    the built-in ones, then skills, custom commands and MCP prompts (a built-in command wins on
    a name clash)."""
    if not text.startswith("/") or any(c.isspace() for c in text):
        return []
    typed = text[1:]
    found = [
        Candidate(
            label=f"/{c.name}" + (f" {c.usage}" if c.usage else ""),
            description=c.description,
            replacement=f"/{c.name}" + (" " if c.usage else ""),
            start=0,
            end=len(text),
        )
        for c in COMMANDS.values()
        if c.name.startswith(typed)
    ]
    seen = set(COMMANDS)
    for c in extra:
        if c.name in seen or not c.name.startswith(typed):
            continue
        seen.add(c.name)
        about = " ".join(c.description.split())
        if len(about) > MAX_DESCRIPTION:
            about = about[: MAX_DESCRIPTION - 1] + "…"
        kind = {"skill": "skill", "mcp": "MCP prompt"}.get(c.kind, visible(c.where))
        found.append(
            Candidate(
                label=f"/{c.name}" + (f" {c.usage}" if c.usage else ""),
                description=f"({kind}) {about}".rstrip(),
                replacement=f"/{c.name} ",
                start=0,
                end=len(text),
            )
        )
    return found


_COMMAND_WORD = re.compile(r"/([A-Za-z][\w-]*)(?:\s|$)")


def near_command(text: str, extra: Sequence[ExtraCommand] = ()) -> str | None:
    """The command `text` was probably meant to be (`/comapct` → "compact"), when it begins
    with a `/word` that is no command but is close to one; None otherwise. A path
    (`/etc/hosts`: a second `/`) or a word near nothing goes to the model as typed."""
    found = _COMMAND_WORD.match(text)
    if found is None:
        return None
    word = found.group(1)
    names = [*COMMANDS, *(c.name for c in extra)]
    if word in names:
        return None
    close = difflib.get_close_matches(word.lower(), names, n=1, cutoff=0.75)
    return close[0] if close else None


def at_token(text: str, cursor: int) -> tuple[int, str] | None:
    """(offset of the `@`, what follows it) when the cursor ends an `@word`."""
    match = _AT_TOKEN.search(text[:cursor])
    return (match.start(1) - 1, match.group(1)) if match else None


class WorkspaceFiles:
    """Relative paths of the workspace's files, walked once (lazily) and ranked per query."""

    def __init__(
        self, root: Path, commands: Callable[[], Sequence[ExtraCommand]] = lambda: ()
    ) -> None:
        self.root = root
        self.commands = commands  # the slash commands of skills and MCP prompts, asked each time
        self._files: list[str] | None = None

    @property
    def files(self) -> list[str]:
        if self._files is None:
            self._files = self._walk()
        return self._files

    def _walk(self) -> list[str]:
        found: list[str] = []
        for directory, dirs, names in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            rel = os.path.relpath(directory, self.root)
            prefix = "" if rel == "." else rel + "/"
            found.extend(prefix + d + "/" for d in dirs)
            found.extend(prefix + n for n in sorted(names))
            if len(found) >= MAX_FILES:
                break
        return found[:MAX_FILES]

    def match(self, query: str, limit: int = MAX_SHOWN) -> list[str]:
        """Path prefix matches first, then file-name prefix, then substring; shorter first."""
        q = query.lower()
        ranked: list[tuple[int, int, str]] = []
        for path in self.files:
            low = path.lower()
            name = low.rstrip("/").rsplit("/", 1)[-1]
            if low == q:
                continue  # already typed in full
            if low.startswith(q):
                rank = 0
            elif name.startswith(q):
                rank = 1
            elif q in low:
                rank = 2
            else:
                continue
            ranked.append((rank, len(path), path))
        ranked.sort()
        return [p for _, _, p in ranked[:limit]]

    def candidates(self, text: str, cursor: int) -> list[Candidate]:
        token = at_token(text, cursor)
        if token is None:
            return []
        start, query = token
        return [
            Candidate(
                label=f"@{p}",
                description="directory" if p.endswith("/") else "",
                replacement=f"@{p}" + ("" if p.endswith("/") else " "),
                start=start,
                end=cursor,
            )
            for p in self.match(query)
        ]
