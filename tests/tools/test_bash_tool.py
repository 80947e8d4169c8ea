import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from peri_cli.base.tool import ToolContext, ToolOutput
from peri_cli.tools.bash import BashParams, BashTool
from peri_cli.tools.bashoutput import TAIL_CHARS


async def bash(
    ctx: ToolContext, command: str, tool: BashTool | None = None, **kw: Any
) -> ToolOutput:
    return await (tool or BashTool()).call(BashParams(command=command, **kw), ctx)


def text_of(out: ToolOutput) -> str:
    return "".join(getattr(p, "text", "") for p in out.content)


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for a reaper (this container's pid 1 may not reap)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def wait_for_file(path: Path, timeout: float = 5.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


async def test_merges_stdout_and_stderr_in_order(ctx: ToolContext) -> None:
    out = await bash(ctx, "echo a; echo b >&2; echo c")
    assert not out.is_error
    assert text_of(out) == "a\nb\nc"


async def test_runs_in_workspace_with_empty_stdin(ctx: ToolContext) -> None:
    out = await bash(ctx, "pwd; cat; echo end")
    assert text_of(out) == f"{ctx.workspace}\nend"


async def test_nonzero_exit_is_information_not_failure(ctx: ToolContext) -> None:
    out = await bash(ctx, "echo oops; exit 3")
    assert not out.is_error
    assert text_of(out) == "oops\nExit code: 3"


async def test_no_output_says_so(ctx: ToolContext) -> None:
    assert text_of(await bash(ctx, "true")) == "(no output)"


async def test_shell_killed_by_signal_is_reported(ctx: ToolContext) -> None:
    out = await bash(ctx, "kill -KILL $$")
    assert "Killed by signal SIGKILL" in text_of(out)


async def test_timeout_kills_the_whole_process_group(ctx: ToolContext) -> None:
    start = time.monotonic()
    out = await bash(ctx, "sleep 30 & echo $! > child.pid; echo started; sleep 30", timeout=500)
    assert time.monotonic() - start < 5
    assert out.is_error
    assert "timed out after 500 ms" in text_of(out)
    assert "started" in text_of(out)
    child = int((ctx.workspace / "child.pid").read_text())
    assert not alive(child)


async def test_timeout_escalates_to_sigkill(ctx: ToolContext) -> None:
    tool = BashTool(kill_grace=0.3)
    command = "trap '' TERM; sleep 30 & echo $! > child.pid; sleep 30"
    out = await bash(ctx, command, tool, timeout=300)
    assert out.is_error and "timed out" in text_of(out)
    assert not alive(int((ctx.workspace / "child.pid").read_text()))


async def test_timeout_above_maximum_is_clamped_and_said(ctx: ToolContext) -> None:
    out = await bash(ctx, "echo hi", timeout=700_000)
    assert "clamped" in text_of(out) and "600000" in text_of(out)
    assert text_of(out).endswith("hi")


async def test_cancellation_kills_the_group_and_propagates(ctx: ToolContext) -> None:
    task = asyncio.create_task(bash(ctx, "sleep 30 & echo $! > child.pid; sleep 30"))
    child = int(await wait_for_file(ctx.workspace / "child.pid"))
    assert alive(child)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not alive(child)


async def test_long_output_keeps_tail_and_saves_everything(ctx: ToolContext) -> None:
    out = await bash(ctx, "seq 1 100000")
    text = text_of(out)
    assert not out.is_error
    note, _, tail = text.partition("\n")
    everything = "".join(f"{i}\n" for i in range(1, 100001))
    assert TAIL_CHARS - 10 < len(tail) <= TAIL_CHARS
    assert everything.endswith("\n" + tail + "\n")  # whole lines, the last one included
    match = re.search(r"full output is in (\S+\.txt)", note)
    assert match, note
    side = Path(match.group(1))
    assert side.parent == ctx.session_dir / "outputs"
    assert side.read_text() == everything
    assert "100000 lines" in note


async def test_short_output_writes_no_side_file(ctx: ToolContext) -> None:
    await bash(ctx, "seq 1 10")
    assert not (ctx.session_dir / "outputs").exists()


async def test_item19_leftover_background_child_is_ended_with_the_call(ctx: ToolContext) -> None:
    out = await bash(ctx, "sleep 300 & echo $!")
    child = int(text_of(out).split()[0])
    try:
        assert not alive(child)
        assert "stopped when it finished" in text_of(out)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


async def test_item19_leftover_that_ignores_sigterm_is_killed(ctx: ToolContext) -> None:
    tool = BashTool(kill_grace=0.3)
    out = await bash(ctx, "(trap '' TERM; sleep 300) > /dev/null 2>&1 & echo $!", tool)
    child = int(text_of(out).split()[0])
    try:
        assert not alive(child)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


async def test_a_command_with_no_leftovers_has_no_note(ctx: ToolContext) -> None:
    out = await bash(ctx, "sleep 0.01 & wait; echo ok")
    assert text_of(out) == "ok"


async def test_run_in_background_returns_at_once(ctx: ToolContext) -> None:
    tool = BashTool()
    start = time.monotonic()
    out = await bash(ctx, "echo started; sleep 0.3; echo done", tool, run_in_background=True)
    assert time.monotonic() - start < 1
    assert not out.is_error
    pid = int(re.search(r"pid (\d+)", text_of(out)).group(1))  # type: ignore[union-attr]
    side = Path(re.search(r"goes to (\S+\.txt)", text_of(out)).group(1))  # type: ignore[union-attr]
    assert side.parent == ctx.session_dir / "outputs"
    deadline = time.monotonic() + 5
    while "[exit code 0]" not in side.read_text() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert side.read_text() == "started\ndone\n\n[exit code 0]\n"
    assert not alive(pid)


async def test_item19_terminate_background_kills_grandchildren(ctx: ToolContext) -> None:
    """The command's shell has exited, but what it started is still in its group."""
    tool = BashTool(kill_grace=0.3)
    out = await bash(ctx, "sleep 300 & echo $! > gc.pid", tool, run_in_background=True)
    leader = int(re.search(r"pid (\d+)", text_of(out)).group(1))  # type: ignore[union-attr]
    grandchild = int(await wait_for_file(ctx.workspace / "gc.pid"))
    stubborn = await bash(
        ctx,
        "(trap '' TERM; sleep 300) & echo $! > stubborn.pid; wait",
        tool,
        run_in_background=True,
    )
    assert not stubborn.is_error
    stubborn_pid = int(await wait_for_file(ctx.workspace / "stubborn.pid"))
    side = Path(re.search(r"goes to (\S+\.txt)", text_of(out)).group(1))  # type: ignore[union-attr]
    deadline = time.monotonic() + 5
    while "[exit code 0]" not in side.read_text() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert "[exit code 0]" in side.read_text()  # the shell ended; its child lives on
    assert alive(grandchild) and alive(stubborn_pid) and not alive(leader)
    tool.terminate_background()
    assert not alive(grandchild)
    assert not alive(stubborn_pid)


def test_item19_background_commands_end_when_the_process_exits(ctx: ToolContext) -> None:
    """Even one whose BashTool was dropped (a SubAgent's, an old session's): the exit hook."""
    script = f"""
import asyncio
from pathlib import Path
from peri_cli.base.tool import ToolContext
from peri_cli.tools.bash import BashParams, BashTool

async def main() -> None:
    ws, session = Path({str(ctx.workspace)!r}), Path({str(ctx.session_dir)!r})
    ctx = ToolContext(workspace=ws, session_dir=session)
    command = "sleep 300 & echo $! > child.pid; wait"
    await BashTool().call(BashParams(command=command, run_in_background=True), ctx)
    while not (ctx.workspace / "child.pid").exists():
        await asyncio.sleep(0.01)

asyncio.run(main())
"""
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert not alive(int((ctx.workspace / "child.pid").read_text()))


async def test_item3_commands_get_the_context_environment(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-SECRET")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://u:PWD@h/")
    env = {"PATH": os.environ["PATH"], "ONLY_HERE": "yes"}
    ctx = ToolContext(workspace=ctx.workspace, session_dir=ctx.session_dir, env=env)
    out = await bash(ctx, "env")
    assert "ONLY_HERE=yes" in text_of(out)
    assert "SECRET" not in text_of(out) and "PWD@" not in text_of(out)
    tool = BashTool()
    await bash(ctx, "env > bg.txt", tool, run_in_background=True)
    text = await wait_for_file(ctx.workspace / "bg.txt")
    assert "ONLY_HERE=yes" in text and "SECRET" not in text and "PWD@" not in text
    tool.terminate_background()


async def test_terminate_background_kills_running_commands(ctx: ToolContext) -> None:
    tool = BashTool()
    out = await bash(ctx, "sleep 30", tool, run_in_background=True)
    pid = int(re.search(r"pid (\d+)", text_of(out)).group(1))  # type: ignore[union-attr]
    assert alive(pid)
    tool.terminate_background()
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not alive(pid)


async def test_missing_workspace_is_an_error_result(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path / "gone", session_dir=tmp_path / "s")
    out = await bash(ctx, "echo hi")
    assert out.is_error and "Could not start" in text_of(out)
