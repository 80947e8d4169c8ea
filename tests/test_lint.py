"""Lint, format and type checks run with the suite, so CI keeps them clean."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def run(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    exe = BIN / tool if (BIN / tool).exists() else shutil.which(tool)
    if exe is None:
        pytest.skip(f"{tool} is not installed")
    return subprocess.run(
        [str(exe), *args], cwd=ROOT, capture_output=True, text=True, check=False, timeout=300
    )


def test_ruff_check() -> None:
    done = run("ruff", "check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format() -> None:
    done = run("ruff", "format", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.timeout(300)
def test_mypy() -> None:
    done = run("mypy", "peri_cli")
    assert done.returncode == 0, done.stdout + done.stderr
