"""The built-in tools' hardening end to end: the real `peri -p` process against the fake server."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import API_KEY, Peri

OPENAI_KEY = "sk-openai-SECRET-9876543210"
PROXY_URL = "http://user:PROXY-PASSWORD@127.0.0.1:9/"


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for a reaper (this container's pid 1 may not reap)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until(check, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition never held")
        time.sleep(0.02)


def pid_in(path: Path) -> int:
    wait_until(lambda: path.exists() and path.read_text().strip())
    return int(path.read_text())


@pytest.fixture
def no_rg_path(tmp_path: Path) -> str:
    """A PATH holding every program of today's PATH except `rg`, so Grep takes its Python path."""
    bin_dir = tmp_path / "bin-without-rg"
    bin_dir.mkdir()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not folder or not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            if name != "rg" and not (bin_dir / name).exists():
                (bin_dir / name).symlink_to(os.path.join(folder, name))
    return str(bin_dir)


@pytest.fixture(params=["rg", "no-rg"])
def backend(request: pytest.FixtureRequest, peri: Peri, no_rg_path: str) -> str:
    """Runs the test with ripgrep on PATH and without it (the Python search)."""
    if request.param == "rg":
        if shutil.which("rg") is None:
            pytest.skip("rg not installed")
    else:
        peri.extra_env["PATH"] = no_rg_path
    return str(request.param)


# Item 3: commands the model runs never see Peri's credentials.


def test_item3_bash_does_not_inherit_provider_keys(peri: Peri) -> None:
    peri.extra_env |= {"OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": PROXY_URL}
    background = "env > bg-env.txt"
    # Waits for the background command's file, so Peri cannot end that command before it wrote it.
    command = (
        "until [ -s bg-env.txt ]; do sleep 0.02; done; "
        'echo "K=$ANTHROPIC_API_KEY"; env > env.txt; env'
    )
    peri.server.set_script(
        [
            {
                "tool_calls": [
                    {"name": "Bash", "input": {"command": background, "run_in_background": True}},
                    {"name": "Bash", "input": {"command": command}},
                ]
            },
            {"text": "done"},
        ]
    )
    result = peri.json("-p", "show the environment", "--permission-mode", "bypass")
    assert result["result"] == "done", result
    last = json.dumps(peri.model_calls()[-1])
    transcript = peri.transcript(result["session_id"]).read_text()
    on_disk = (peri.workspace / "env.txt").read_text() + (peri.workspace / "bg-env.txt").read_text()
    assert "PERI_HOME=" in last and "PERI_HOME=" in on_disk  # the commands printed their env
    for where in (last, transcript, on_disk):
        for secret in (API_KEY, OPENAI_KEY, "PROXY-PASSWORD", peri.server.url):
            assert secret not in where
        for name in ("ANTHROPIC_API_KEY=", "ANTHROPIC_BASE_URL=", "OPENAI_API_KEY=", "OPENAI_BASE"):
            assert name not in where
    assert "K=\\n" in last


# Item 19: nothing a command started outlives Peri.


def test_item19_processes_end_with_a_headless_run(peri: Peri) -> None:
    background = "sleep 300 & echo $! > bg-child.pid; wait"
    foreground = (
        "until [ -s bg-child.pid ]; do sleep 0.02; done; sleep 300 & echo $! > fg-child.pid"
    )
    peri.server.set_script(
        [
            {
                "tool_calls": [
                    {"name": "Bash", "input": {"command": background, "run_in_background": True}},
                    {"name": "Bash", "input": {"command": foreground}},
                ]
            },
            {"text": "started"},
        ]
    )
    result = peri.json("-p", "start things", "--permission-mode", "bypass")
    assert result["result"] == "started", result
    pids = [pid_in(peri.workspace / name) for name in ("bg-child.pid", "fg-child.pid")]
    leader = json.dumps(peri.model_calls()[-1]).split("background with pid ")[1].split(" ")[0]
    for pid in [*pids, int(leader)]:
        assert not alive(pid), pid


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_item19_signal_mid_command_ends_everything(peri: Peri, sig: signal.Signals) -> None:
    background = "sleep 300 & echo $! > bg-child.pid"  # its shell exits, the child stays
    foreground = (
        "until [ -s bg-child.pid ]; do sleep 0.02; done; sleep 300 & echo $! > fg.pid; wait"
    )
    peri.server.set_script(
        [
            {
                "tool_calls": [
                    {"name": "Bash", "input": {"command": background, "run_in_background": True}},
                    {"name": "Bash", "input": {"command": foreground}},
                ]
            },
            {"text": "never reached"},
        ]
    )
    proc = peri.popen("-p", "start things", "--permission-mode", "bypass")
    try:
        pids = [pid_in(peri.workspace / name) for name in ("bg-child.pid", "fg.pid")]
        assert all(alive(pid) for pid in pids)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in err
    assert proc.returncode != 0 and "cancelled" in err + out
    for name, pid in zip(("background child", "foreground child"), pids, strict=True):
        assert not alive(pid), (name, err)


# Item 15: Grep never hangs, with ripgrep or without it.


def test_item15_grep_with_a_fifo_in_the_tree_in_plan_mode(peri: Peri, backend: str) -> None:
    (peri.workspace / "a.py").write_text("needle = 1\n")
    os.mkfifo(peri.workspace / "pipe.py")
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Grep", "input": {"pattern": "needle"}}]},
            {"text": "searched"},
        ]
    )
    result = peri.json("-p", "find it", "--permission-mode", "plan")
    assert result["result"] == "searched", result
    last = json.dumps(peri.model_calls()[-1])
    assert "Found 1 files\\na.py" in last


def test_item15_sigterm_stops_a_runaway_python_grep(peri: Peri, no_rg_path: str) -> None:
    peri.extra_env["PATH"] = no_rg_path
    (peri.workspace / "b.txt").write_text("a" * 40 + "!\n")
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Grep", "input": {"pattern": "(a+)+$"}}]},
            {"text": "never reached"},
        ]
    )
    proc = peri.popen("-p", "search", "--output-format", "json")
    try:
        # The model's request came back with the call; give Grep's search time to be running.
        wait_until(lambda: len(peri.model_calls()) == 1)
        wait_until(lambda: _runs_grep_search(proc.pid))
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1 and "Traceback" not in err
    assert json.loads(out)["is_error"] is True
    assert not _runs_grep_search(proc.pid)


def _runs_grep_search(parent: int) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == parent and fields[0] != "Z" and b"grepsearch.py" in cmdline:
            return True
    return False


# Issue 15: Grep and Glob respect .gitignore and .ignore, with ripgrep and without it.


def test_grep_and_glob_respect_nested_gitignore_and_negation(peri: Peri, backend: str) -> None:
    ws = peri.workspace
    (ws / ".git").mkdir()
    files = {
        ".gitignore": "build/\n*.log\n!keep.log\n",
        "src/app.py": "needle\n",
        "build/src/app.py": "needle\n",  # a git-ignored copy of the sources
        "debug.log": "needle\n",
        "keep.log": "needle\n",
        "src/gen/.gitignore": "*.py\n!main.py\n",
        "src/gen/x.py": "needle\n",
        "src/gen/main.py": "needle\n",
        ".env": "needle\n",
    }
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    peri.server.set_script(
        [
            {
                "tool_calls": [
                    {"name": "Grep", "input": {"pattern": "needle", "output_mode": "content"}},
                    {"name": "Glob", "input": {"pattern": "**/*.py"}},
                ]
            },
            {
                "tool_calls": [
                    {"name": "Grep", "input": {"pattern": "needle", "include_ignored": True}},
                    {"name": "Glob", "input": {"pattern": "**/*.py", "include_ignored": True}},
                ]
            },
            {"text": "done"},
        ]
    )
    result = peri.json("-p", "find needles", "--permission-mode", "plan")
    assert result["result"] == "done", result
    first, second = (_tool_results(body) for body in peri.model_calls()[1:3])
    grep_lines, glob_lines = (text.splitlines() for text in first)
    assert grep_lines == [
        ".env:1:needle",
        "keep.log:1:needle",
        "src/app.py:1:needle",
        "src/gen/main.py:1:needle",
    ]
    assert sorted(glob_lines) == ["src/app.py", "src/gen/main.py"]
    grep_all, glob_all = (text.splitlines() for text in second)
    assert grep_all[0] == "Found 7 files" and "build/src/app.py" in grep_all
    assert sorted(glob_all) == ["build/src/app.py", "src/app.py", "src/gen/main.py", "src/gen/x.py"]


def _tool_results(body: dict[str, object]) -> list[str]:
    """The texts of the tool results in a request's last message, for either wire format."""
    messages = body["messages"]
    assert isinstance(messages, list)
    if messages[-1].get("role") == "tool":  # OpenAI: one message per result
        results = []
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            results.insert(0, message["content"])
        return results
    return [
        "".join(part["text"] for part in block["content"])
        if isinstance(block["content"], list)
        else block["content"]
        for block in messages[-1]["content"]
        if block["type"] == "tool_result"
    ]
