"""Run a user's program (a docs example, a file in examples/) as its own Python process against
the fake server: base URL and key from the environment, as a user's would be."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.fakeserver import FakeServer
from tests.sdk.conftest import API_KEY


def run_program(args: list[str], cwd: Path, server: FakeServer, **env: str) -> str:
    """`python *args` in `cwd` (HOME and PERI_HOME under it); its stdout. Fails on a non-zero exit,
    showing stderr."""
    home = cwd / "home"
    home.mkdir(exist_ok=True)
    keep = {
        k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "PERI_"))
    }
    full = keep | {
        "HOME": str(home),
        "PERI_HOME": str(home / ".peri"),
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": API_KEY,
        **env,
    }
    done = subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
