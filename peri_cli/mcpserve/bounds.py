"""The bounds `peri mcp serve` holds every call to (CONTRACT.md §14): a permission mode no looser
than the server's, a `cwd` inside the root (symlinks resolved), a turn limit no higher than the
server's. A call outside them is refused with a message naming the bound."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from peri_cli.sdk import MODES

# Strictest first: a call may ask for a mode at this index or lower than the server's.
STRICTNESS = ("plan", "default", "accept-edits", "bypass")
ALIASES = {"acceptEdits": "accept-edits", "bypassPermissions": "bypass"}
assert set(STRICTNESS) == set(MODES)


class Refused(Exception):
    """A call the bounds do not allow; the message says which bound and how to widen it."""


def mode_name(mode: str) -> str:
    """Peri's name of a mode (the Claude Agent SDK's names accepted too)."""
    return ALIASES.get(mode, mode)


def looser(mode: str, than: str) -> bool:
    return STRICTNESS.index(mode) > STRICTNESS.index(than)


@dataclass(frozen=True)
class Bounds:
    """How the server was started: its mode, root, concurrency and turn limit."""

    mode: str = "default"
    root: Path | None = None  # resolved; None: only the server's own folder
    here: Path = Path()  # the server's folder, resolved
    home: Path | None = None  # $HOME, resolved
    max_concurrent: int = 2
    max_turns: int | None = None

    @property
    def allowed(self) -> Path:
        """The folder calls run in or under."""
        return self.root if self.root is not None else self.here

    def closed(self) -> str | None:
        """Why every call is refused (a server in / or $HOME without --root), or None."""
        if self.root is not None:
            return None
        if self.here in (Path(self.here.anchor), self.home):
            return (
                f"this server was started in {self.here} without --root: it runs no call there; "
                "restart it with --root DIR (the folder calls may work in)"
            )
        return None

    def call_mode(self, asked: object) -> str:
        """The call's mode: the server's when not given; a looser one is refused."""
        if asked is None or asked == "":
            return self.mode
        if not isinstance(asked, str) or mode_name(asked) not in STRICTNESS:
            raise Refused(f"unknown permission_mode {asked!r}; one of {', '.join(STRICTNESS)}")
        mode = mode_name(asked)
        if looser(mode, self.mode):
            raise Refused(
                f"permission_mode {mode!r} is looser than this server's bound "
                f"--permission-mode {self.mode} (strictest first: {' > '.join(STRICTNESS)})"
            )
        return mode

    def call_cwd(self, asked: object) -> Path:
        """The call's workspace, symlinks resolved: inside the root (or the server's folder)."""
        if why := self.closed():
            raise Refused(why)
        if asked is None or asked == "":
            return self.allowed
        if not isinstance(asked, str):
            raise Refused(f"cwd must be a path, got {type(asked).__name__}")
        path = Path(asked).expanduser()
        place = (path if path.is_absolute() else self.allowed / path).resolve()
        if self.root is None and place != self.here:
            raise Refused(
                f"cwd {asked} is not this server's folder {self.here}; without --root a call "
                "runs only there (start the server with --root DIR to allow folders under DIR)"
            )
        if self.root is not None and not place.is_relative_to(self.root):
            raise Refused(
                f"cwd {asked} (resolved: {place}) is outside this server's bound --root {self.root}"
            )
        if not place.is_dir():
            raise Refused(f"cwd {asked} is not a folder")
        return place

    def inside(self, workspace: Path) -> bool:
        """Whether a session's workspace lies where this server's calls may work."""
        place = workspace.resolve()
        return place.is_relative_to(self.root) if self.root is not None else place == self.here

    def call_turns(self, asked: object) -> int | None:
        """The call's turn limit: the server's when not given; a higher one is refused."""
        if asked is None:
            return self.max_turns
        if isinstance(asked, bool) or not isinstance(asked, int) or asked < 1:
            raise Refused(f"max_turns must be a positive integer, got {asked!r}")
        if self.max_turns is not None and asked > self.max_turns:
            raise Refused(
                f"max_turns {asked} is more than this server's bound --max-turns {self.max_turns}"
            )
        return asked
