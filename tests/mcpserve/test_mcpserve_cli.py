"""Issue 40, `peri mcp serve`'s command line: bad usage is one line on stderr and exit status 2,
never a traceback; a server started in $HOME without --root says at start why it will refuse."""

from __future__ import annotations

import subprocess
import sys

from tests.e2e.conftest import Peri


def test_bad_usage_is_one_line_and_status_2(peri: Peri) -> None:
    for argv, said in [
        (["mcp"], "try `peri mcp serve`"),
        (["mcp", "serve", "--root", str(peri.workspace / "nope")], "--root"),
        (["mcp", "serve", "--permission-mode", "yolo"], "invalid choice: 'yolo'"),
        (["mcp", "serve", "--max-concurrent", "0"], "expected a positive integer"),
        (["mcp", "serve", "--max-turns", "x"], "expected a positive integer"),
    ]:
        done = peri.run(*argv)
        assert done.returncode == 2, (argv, done.stderr)
        assert said in done.stderr and "Traceback" not in done.stderr, (argv, done.stderr)
        assert done.stdout == ""


def test_help_names_the_bounds(peri: Peri) -> None:
    done = peri.run("mcp", "serve", "--help")
    assert done.returncode == 0
    for flag in ("--permission-mode", "--root", "--max-concurrent", "--max-turns"):
        assert flag in done.stdout


def test_a_server_in_home_without_root_warns_at_start(peri: Peri) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "peri_cli", "mcp", "serve"],
        cwd=peri.home,
        env=peri.env(),
        input="",  # the client goes away at once
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "without --root: it runs no call there" in proc.stderr
    assert "Traceback" not in proc.stderr
