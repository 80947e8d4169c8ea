"""Whether the sandbox can run here, checked once per process, and why not in words a user can
act on (with the install line)."""

from __future__ import annotations

import functools
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from peri_cli.base import programs
from peri_cli.sandbox.seatbelt import SANDBOX_EXEC

SEATBELT = "Seatbelt (sandbox-exec)"
PROBE = ["--ro-bind", "/", "/", "--unshare-all", "true"]  # after bwrap's own full path
INSTALL_LINE = (
    "install bubblewrap and socat (Debian/Ubuntu: `sudo apt-get install bubblewrap socat`; "
    "Fedora: `sudo dnf install bubblewrap socat`)"
)


@dataclass(frozen=True)
class Availability:
    available: bool
    why_not: str = ""  # what failed, with what to do about it
    socat: bool = False  # the network relay (without it the sandbox has no network at all)
    engine: str = "bubblewrap"

    @property
    def seatbelt(self) -> bool:
        return self.engine == SEATBELT

    def describe(self) -> str:
        if self.available and self.seatbelt:
            return f"{self.engine} works (no network inside on macOS yet)"
        if self.available:
            relay = "socat found" if self.socat else "socat missing: no network inside"
            return f"{self.engine} works ({relay})"
        return self.why_not


@functools.cache
def probe() -> Availability:
    """Run `bwrap --ro-bind / / --unshare-all true` once and report what it said (macOS:
    whether `sandbox-exec` is there)."""
    if sys.platform == "darwin":
        if Path(SANDBOX_EXEC).exists():
            # (socat stays False: no relay on macOS yet, so commands there have no network)
            return Availability(True, engine=SEATBELT)
        return Availability(False, f"{SANDBOX_EXEC} is missing; commands run unsandboxed")
    if not sys.platform.startswith("linux"):
        return Availability(False, f"no sandbox for {sys.platform}")
    # (Found only outside what sandboxed commands can write: one planted in an activated
    # `.venv/bin` would run here, as the user, and then wrap every command.)
    bwrap = programs.find("bwrap")
    if bwrap is None and programs.only_where_writable("bwrap"):
        return Availability(False, f"bubblewrap cannot be used: {programs.missing('bwrap')}")
    if bwrap is None:
        return Availability(False, f"bubblewrap (bwrap) is not installed: {INSTALL_LINE}")
    try:
        done = subprocess.run(
            [bwrap, *PROBE], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return Availability(False, f"bubblewrap could not run ({e}): {INSTALL_LINE}")
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip() or f"exit code {done.returncode}"
        return Availability(
            False,
            f"bubblewrap cannot create a sandbox here ({said}); user namespaces may be off "
            "(sysctl kernel.unprivileged_userns_clone=1)",
        )
    return Availability(True, socat=programs.find("socat") is not None)
