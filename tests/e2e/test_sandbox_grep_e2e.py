"""Grep under the sandbox when Peri itself is installed under /tmp (issue 37 item 7): the
sandbox gives /tmp a fresh tmpfs, which hid the interpreter, the search script and a ripgrep
installed with Peri from Grep's helper process. The real `peri -p`, run from a virtual
environment made under /tmp, with bubblewrap for real."""

from __future__ import annotations

import json
import shutil
import subprocess
import sysconfig
import tempfile
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

import peri_cli
from tests.e2e.conftest import Peri
from tests.e2e.test_sandbox_e2e import _PROBLEM, sandboxed
from tests.e2e.test_tools_e2e import _tool_results

pytestmark = pytest.mark.skipif(_PROBLEM is not None, reason=f"bwrap cannot run: {_PROBLEM}")


def install_under(folder: Path) -> Path:
    """A virtual environment in `folder` holding a copy of Peri (its dependencies are the test
    environment's, by a .pth line); its python."""
    venv.EnvBuilder(symlinks=True).create(folder)
    python = folder / "bin" / "python"
    purelib = Path(sysconfig.get_paths(vars={"base": str(folder)})["purelib"])
    shutil.copytree(
        Path(peri_cli.__file__).parent,
        purelib / "peri_cli",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (purelib / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def tools_without_rg(home: Path) -> str:
    """A PATH holding what Peri and the sandbox run, but no ripgrep (so Python searches)."""
    bin_dir = home / "bin"
    bin_dir.mkdir()
    for name in ("bash", "sh", "bwrap", "socat", "git", "env", "true"):
        found = shutil.which(name)
        if found:
            (bin_dir / name).symlink_to(found)
    return str(bin_dir)


def grep(pattern: str, path: str | None = None) -> dict[str, object]:
    return {"name": "Grep", "input": {"pattern": pattern, **({"path": path} if path else {})}}


@pytest.fixture
def under_tmp() -> Iterator[Path]:
    """A folder in /tmp itself, wherever pytest keeps its own."""
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="peri-install-") as folder:
        yield Path(folder)


@pytest.mark.parametrize("search", ["python", "ripgrep"])
@pytest.mark.timeout(180)
def test_grep_works_in_the_sandbox_with_peri_installed_under_tmp(
    peri: Peri, under_tmp: Path, search: str
) -> None:
    python = install_under(under_tmp / "venv")
    if search == "python":
        peri.extra_env["PATH"] = tools_without_rg(peri.home)
    else:  # a ripgrep installed with Peri (`pip install ripgrep` puts it in the venv)
        rg = shutil.which("rg")
        if rg is None:
            pytest.skip("rg is not installed")
        (python.parent / "rg").symlink_to(rg)
        peri.extra_env["PATH"] = f"{python.parent}:{peri.env()['PATH']}"
    sandboxed(peri)
    (peri.workspace / "a.txt").write_text("the needle is here\n")
    beside = under_tmp / "beside"  # in /tmp too, beside Peri's install: still hidden inside
    beside.mkdir()
    (beside / "b.txt").write_text("another needle is here\n")
    peri.server.set_script([{"tool_calls": [grep("needle"), grep("needle", str(beside))]}])
    # bypass: a read beside the workspace would ask, and be denied, in default mode
    args = ["-p", "go", "--output-format", "json", "--permission-mode", "bypass"]
    done = subprocess.run(
        [str(python), "-m", "peri_cli", *args],
        check=False,
        cwd=peri.workspace,
        env=peri.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(done.stdout)["result"] == "ok", done.stderr
    found, hidden = _tool_results(peri.model_calls()[-1])
    assert found == "Found 1 files\na.txt", found
    # the search ran in the sandbox, whose /tmp shows Peri's install and nothing beside it
    assert "b.txt" not in hidden and ("No matches" in hidden or "ripgrep failed" in hidden), hidden
