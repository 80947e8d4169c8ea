"""The kernel's own files stay read-only inside the sandbox, as root and as an unprivileged
user (bubblewrap 0.8 leaves /proc/sys writable to uid 0 unless told). Each write puts back the
value already there, so a failure changes nothing on the host."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from peri_cli.base.settings_sandbox import SandboxSettings
from peri_cli.permissions.sandbox_policy import SandboxPlaces, build_policy
from peri_cli.sandbox.probe import probe
from peri_cli.sandbox.runner import BwrapSandbox

pytestmark = pytest.mark.skipif(not probe().available, reason=probe().why_not)
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
WRITES = (
    'v=$(cat /proc/sys/kernel/domainname); printf "%s\\n" "$v" > /proc/sys/kernel/domainname'
    " && echo WROTE-SYSCTL;"
    ' v=$(cat /sys/kernel/uevent_helper); printf "%s\\n" "$v" > /sys/kernel/uevent_helper'
    " && echo WROTE-SYS;"
    " grep -E ' /proc/sys | /sys ' /proc/self/mountinfo"
)


@pytest.fixture
def root() -> Iterator[Path]:
    """A folder every user may enter (pytest's own tmp_path is root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="peri-kernel-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _can_drop_to_nobody() -> bool:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return False
    done = subprocess.run([*NOBODY, *probe_argv()], capture_output=True, check=False)
    return done.returncode == 0


def probe_argv() -> list[str]:
    return ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "true"]


@pytest.mark.parametrize("user", ["self", "nobody"])
def test_proc_sys_and_sys_are_read_only(root: Path, user: str) -> None:
    if user == "nobody" and not _can_drop_to_nobody():
        pytest.skip("needs root, setpriv and bubblewrap working for uid 65534")
    ws, home = root / "ws", root / "home"
    for d in (ws, home / ".peri", root / "t"):
        d.mkdir(parents=True)
        d.chmod(0o777)
    places = SandboxPlaces(ws, home, home / ".peri", root / "t", {})
    sandbox = BwrapSandbox(
        build_policy(SandboxSettings(enabled=True), places, [], trusted=True), lambda _: False
    )
    wrapped = sandbox.wrap(["bash", "-c", WRITES], {"PATH": os.environ["PATH"]}, ws)
    prefix = NOBODY if user == "nobody" else []
    try:
        done = subprocess.run(
            [*prefix, *wrapped.argv],
            env=wrapped.env,
            cwd=ws,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    finally:
        wrapped.finish()
        sandbox.close()
    out = done.stdout + done.stderr
    assert "WROTE-SYSCTL" not in out and "WROTE-SYS" not in out, out
    mounts = [line for line in out.splitlines() if " /proc/sys " in line or " /sys " in line]
    assert any(" /proc/sys ro," in line for line in mounts), out
    assert mounts and all(" ro," in line for line in mounts if " /sys " in line), out
