"""Issue 37 item 12: `peri sessions | head` and the like. When the reader of stdout goes away,
Peri exits quietly with 141 (128 + SIGPIPE, what a shell reports for a Unix tool SIGPIPE
ended), never with a `BrokenPipeError` traceback or an "Exception ignored" line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.e2e.conftest import Peri

EXIT_PIPE = 141


def _into_closed_pipe(peri: Peri, *args: str) -> subprocess.CompletedProcess[str]:
    """Run peri with stdout a pipe whose reader is already gone: its first write fails."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "peri_cli", *args],
            check=False,
            cwd=peri.workspace,
            env=peri.env(),
            stdin=subprocess.DEVNULL,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write)


def _a_session(peri: Peri) -> None:
    peri.server.set_script([{"text": "an answer"}])
    done = peri.run("-p", "make a session to list")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("sessions",),
        ("sessions", "--json"),
        ("meta",),
        ("meta", "--json"),
        ("--version",),
    ],
    ids=" ".join,
)
def test_listing_into_a_closed_pipe_exits_quietly(peri: Peri, args: tuple[str, ...]) -> None:
    _a_session(peri)
    done = _into_closed_pipe(peri, *args)
    assert done.stderr == ""
    assert done.returncode == EXIT_PIPE


def test_help_into_a_closed_pipe_is_quiet(peri: Peri) -> None:
    done = _into_closed_pipe(peri, "--help")
    assert done.stderr == ""
    assert done.returncode == 0  # argparse's own printing swallows the error: it never reaches Peri


@pytest.mark.parametrize("fmt", ["text", "json", "stream-json"])
def test_a_headless_run_into_a_closed_pipe_exits_quietly(peri: Peri, fmt: str) -> None:
    peri.server.set_script([{"text": "a reply nobody reads"}])
    done = _into_closed_pipe(peri, "-p", "hello", "--output-format", fmt)
    assert done.stderr == ""
    assert done.returncode == EXIT_PIPE


def test_an_empty_listing_into_a_closed_pipe_exits_quietly(peri: Peri) -> None:
    done = _into_closed_pipe(peri, "sessions")  # "No sessions in this workspace yet."
    assert done.stderr == ""
    assert done.returncode == EXIT_PIPE


def test_head_reads_the_first_session_and_peri_says_nothing(peri: Peri) -> None:
    """The real thing, through a shell: `peri sessions | head -1` prints one line, no noise."""
    for n in range(3):
        peri.server.set_script([{"text": f"answer {n}"}])
        assert peri.run("-p", f"prompt number {n}").returncode == 0
    command = f"{sys.executable} -m peri_cli sessions | head -1"
    done = subprocess.run(
        ["sh", "-c", command],
        check=False,
        cwd=peri.workspace,
        env=peri.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stderr == ""
    assert len(done.stdout.splitlines()) == 1 and "prompt number 2" in done.stdout
