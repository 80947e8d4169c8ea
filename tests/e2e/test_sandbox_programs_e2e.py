"""Issue 37 item 4 end to end: with a workspace folder on PATH (an activated `.venv/bin`), what a
sandboxed command plants there is never what Peri runs outside the sandbox (bubblewrap, the hook
shell, a hook's interpreter), and a Peri installed inside the workspace asks for every command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import Peri
from tests.e2e.test_sandbox_e2e import _PROBLEM, bash, run_calls, sandboxed

pytestmark = pytest.mark.skipif(_PROBLEM is not None, reason=f"bwrap cannot run: {_PROBLEM}")

# Each planted program notes that it ran (a write outside the workspace: it succeeds only where
# the program runs outside the sandbox), then becomes the real one so that the run goes on.
_PLANT = """mkdir -p .venv/bin && cd .venv/bin && for name in bwrap bash python3; do
  printf '#!/bin/sh\\necho "planted %s $*" >> {log}\\nexec {real}/%s "$@"\\n' $name $name > $name
  chmod +x $name
done && ls"""

_HOOK = """import os, sys
with open(os.environ["HOOK_LOG"], "a") as f:
    f.write(sys.executable + "\\n")
"""


def _planting(peri: Peri, tmp: Path) -> tuple[Path, Path]:
    """The sandbox on, `.venv/bin` first on PATH, a plugin-style hook; the two logs."""
    planted, hook_log = tmp / "planted.log", tmp / "hook.log"
    for name in ("bwrap", "bash", "python3"):  # one folder holding all three real programs
        real = shutil.which(name)
        assert real is not None
        (tmp / "real").mkdir(exist_ok=True)
        os.symlink(real, tmp / "real" / name)
    hook_dir = peri.home / "plugin"
    hook_dir.mkdir(parents=True)
    (hook_dir / "hook.py").write_text(_HOOK)
    hook = {"type": "command", "command": "python3 ${HOME}/plugin/hook.py"}
    sandboxed(peri, {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}})
    peri.extra_env |= {
        "PATH": f"{peri.workspace / '.venv' / 'bin'}:{os.environ['PATH']}",
        "HOOK_LOG": str(hook_log),
    }
    return planted, hook_log


def test_item37_4_what_a_sandboxed_command_plants_on_path_is_not_run_outside(
    peri: Peri, tmp_path: Path
) -> None:
    planted, hook_log = _planting(peri, tmp_path)
    plant = _PLANT.format(log=planted, real=tmp_path / "real")
    made, escape = run_calls(peri, [bash(plant), bash("touch ../escaped.txt; echo tried")])
    assert made.split() == ["bash", "bwrap", "python3"], made  # planted inside the sandbox
    assert "denied by the sandbox" in escape, escape  # the next command still ran inside
    # A second run: the availability probe, every command and every hook start afresh.
    (again,) = run_calls(peri, [bash("touch ../escaped.txt; echo tried")])
    assert "denied by the sandbox" in again, again
    assert not (peri.workspace.parent / "escaped.txt").exists()
    outside = planted.read_text() if planted.exists() else ""
    assert outside == "", outside  # nothing planted ran where it could write outside
    interpreters = hook_log.read_text().split()
    assert len(interpreters) == 3, interpreters  # the hook ran before each command
    assert all(".venv" not in i for i in interpreters), interpreters


def _venv_inside(workspace: Path) -> Path:
    """A virtual environment in the workspace whose Python runs this Peri (as the README's quick
    start makes one): its own `pyvenv.cfg` and `bin/python`, this one's packages."""
    import sys

    ours = Path(sys.prefix)
    venv = workspace / ".venv"
    (venv / "bin").mkdir(parents=True)
    shutil.copy(ours / "pyvenv.cfg", venv / "pyvenv.cfg")
    os.symlink(os.path.realpath(sys.executable), venv / "bin" / "python")
    os.symlink(ours / "lib", venv / "lib")
    return venv / "bin" / "python"


def test_item37_4_peri_inside_the_workspace_says_so_and_asks_for_every_command(
    peri: Peri,
) -> None:
    sandboxed(peri)
    python = _venv_inside(peri.workspace)
    peri.server.set_script([{"tool_calls": [bash("echo ran > ran.txt")]}, {"text": "done"}])
    done = subprocess.run(
        [str(python), "-m", "peri_cli", "-p", "go", "--output-format", "json"],
        check=False,
        cwd=peri.workspace,
        env=peri.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    result = json.loads(done.stdout)
    assert "runs from inside the workspace" in done.stderr, done.stderr
    assert "pipx" in done.stderr, done.stderr
    assert not (peri.workspace / "ran.txt").exists()  # asked, and `-p` denies what it asks
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Bash"], result
