"""Keys typed while Peri starts keep their meaning.

Until Textual puts the terminal in raw mode (a few hundred milliseconds after launch), the
terminal's line discipline still translates what the user types: with ICRNL on, the Enter of a
prompt typed ahead (`peri`, Enter, then the question at once) arrives as "\\n", which Textual reads
as Ctrl+J, the prompt's new-line key, so the question sat unsent. Clearing ICRNL first thing (the
rest of raw mode is Textual's) keeps Enter an Enter. Textual saves and restores the attributes it
found, which are then ours, so the user's own are put back here on the way out.

Imports only `termios`: it runs before Textual is loaded."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def enter_stays_enter(fd: int | None = None) -> Iterator[None]:
    """Clear ICRNL on the terminal (stdin's) for the TUI's life; restore the user's after."""
    try:
        import termios
    except ImportError:  # not POSIX
        yield
        return
    try:
        fd = sys.stdin.fileno() if fd is None else fd
        before = termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError, AttributeError):  # not a terminal
        yield
        return
    ahead = list(before)
    ahead[0] = before[0] & ~termios.ICRNL  # iflag
    with contextlib.suppress(termios.error, OSError):
        termios.tcsetattr(fd, termios.TCSANOW, ahead)
    try:
        yield
    finally:
        with contextlib.suppress(termios.error, OSError):  # the terminal may be gone (SIGHUP)
            termios.tcsetattr(fd, termios.TCSANOW, before)
