"""Bash: run a shell command in the workspace, in its own process group (ended when the command
is, with whatever it left running). Background commands are `bashjobs.py`, the output the
model reads `bashoutput.py`, ending process groups `procgroups.py`."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import subprocess
import threading
from pathlib import Path

from pydantic import BaseModel, Field

from peri_cli.base.tool import PydanticTool, ToolContext, ToolKind, ToolOutput, ToolTraits
from peri_cli.tools.bashjobs import Job, track, watch
from peri_cli.tools.bashoutput import Capture, report, stream_progress
from peri_cli.tools.bashsandbox import Launch
from peri_cli.tools.bashsandbox import explained as _explained
from peri_cli.tools.bashsandbox import launch as _launch
from peri_cli.tools.procgroups import end_group, end_groups_now, group_alive
from peri_cli.tools.sidefile import SideFile, new_side_file, relay

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
# After the shell exits, how long to wait for output still in flight before giving up on the pipe.
_DRAIN_SECONDS = 0.5


@functools.cache
def _description() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


class BashParams(BaseModel):
    command: str = Field(
        description="The command to run with `bash -c`, in the workspace directory."
    )
    timeout: int | None = Field(
        default=None,
        ge=1,
        description=f"Timeout in ms (default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS}).",
    )
    run_in_background: bool = Field(
        default=False,
        description="Start the command detached and return at once with its pid and output file.",
    )
    dangerouslyDisableSandbox: bool = Field(
        default=False,
        description=(
            "Run outside the sandbox. Only when a command failed because of the sandbox and "
            "cannot work inside it; the user is always asked first."
        ),
    )


class _Shell(asyncio.SubprocessProtocol):
    """Feeds merged stdout/stderr to a capture; signals the shell's exit and the pipe's close."""

    def __init__(self, capture: Capture) -> None:
        loop = asyncio.get_running_loop()
        self.capture = capture
        self.exited: asyncio.Future[None] = loop.create_future()
        self.pipe_closed: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        self.capture.feed(data.encode() if isinstance(data, str) else data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if not self.pipe_closed.done():
            self.pipe_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


class BashTool(PydanticTool[BashParams]):
    name = "Bash"
    kind: ToolKind = "execute"
    params = BashParams
    traits = ToolTraits("shell", card_arg="command", editor_kind="execute")

    def __init__(self, *, kill_grace: float = 2.0) -> None:
        """`kill_grace`: seconds between SIGTERM and SIGKILL when stopping a command."""
        self._kill_grace = kill_grace
        self._background: list[Job] = []

    def description(self) -> str:
        return _description()

    async def call(self, params: BashParams, ctx: ToolContext) -> ToolOutput:
        p = params
        launch = _launch(p.command, ctx, outside=p.dangerouslyDisableSandbox)
        if p.run_in_background:
            return self._start_background(ctx, launch)
        timeout_ms = p.timeout or DEFAULT_TIMEOUT_MS
        notes = []
        if timeout_ms > MAX_TIMEOUT_MS:
            notes.append(f"[timeout {timeout_ms} ms clamped to the maximum, {MAX_TIMEOUT_MS} ms]")
            timeout_ms = MAX_TIMEOUT_MS
        try:
            output = await self._run(timeout_ms, ctx, notes, launch)
        finally:
            launch.finish()
        if ctx.sandbox is not None and launch.sandboxed:
            return _explained(output, ctx.sandbox, ctx.workspace, launch)
        return output

    def terminate_background(self) -> None:
        """End the process groups of background commands, what their shells started included
        (call at session end; Peri's exit calls it too). SIGTERM, then SIGKILL after the grace."""
        jobs, self._background = self._background, []
        end_groups_now([j.pgid for j in jobs if not j.reaped], self._kill_grace)
        for job in jobs:
            job.release()

    async def _run(
        self, timeout_ms: int, ctx: ToolContext, notes: list[str], launch: Launch
    ) -> ToolOutput:
        capture = Capture(new_side_file(ctx.session_dir))
        loop = asyncio.get_running_loop()
        spawn = asyncio.ensure_future(
            loop.subprocess_exec(
                lambda: _Shell(capture),
                *launch.argv,
                cwd=ctx.workspace,
                env=launch.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        try:
            # Shielded: cancelled while the pipes connect, asyncio would kill only the shell,
            # and what it had started already would live on.
            transport, shell = await asyncio.shield(spawn)
        except OSError as e:
            return ToolOutput.error(f"Could not start bash in {ctx.workspace}: {e.strerror or e}.")
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                transport, _ = await spawn
                await end_group(transport.get_pid(), self._kill_grace)
                transport.close()
            raise
        # start_new_session makes the shell a session and group leader: its pid is the group id.
        pgid = transport.get_pid()
        live = asyncio.ensure_future(stream_progress(capture, ctx))
        try:
            try:
                await asyncio.wait_for(asyncio.shield(shell.exited), timeout_ms / 1000)
            except TimeoutError:
                await end_group(pgid, self._kill_grace)
                await asyncio.wait([shell.exited, shell.pipe_closed], timeout=1.0)
                body = capture.finish() or "(no output)"
                return ToolOutput.error(
                    f"Command timed out after {timeout_ms} ms; it and its child processes were "
                    f"killed. If it needs longer, pass a larger timeout (max {MAX_TIMEOUT_MS}) or "
                    f"use run_in_background.\nOutput before the timeout:\n{body}"
                )
            except asyncio.CancelledError:
                await end_group(pgid, self._kill_grace)
                raise
            # What the command left running in its group (`server &`) would outlive Peri: end it.
            left_running = await end_group(pgid, self._kill_grace)
            # Processes outside the group (setsid) may keep the pipe open; don't wait on them.
            await asyncio.wait([shell.pipe_closed], timeout=_DRAIN_SECONDS)
            returncode = transport.get_returncode()
        finally:
            live.cancel()
            transport.close()
        text = report(capture, returncode, notes, shell.pipe_closed.done(), left_running)
        return ToolOutput.text(text)

    def _start_background(self, ctx: ToolContext, launch: Launch) -> ToolOutput:
        self._release_finished()
        side = SideFile(new_side_file(ctx.session_dir))
        if not side.open():
            launch.finish()
            return ToolOutput.error(f"Could not start bash in {ctx.workspace}: {side.error}.")
        out_path = side.path
        out, into = os.pipe()  # through Peri, which keeps the side file under its cap
        try:
            proc = subprocess.Popen(
                launch.argv,
                cwd=ctx.workspace,
                env=launch.env,
                stdin=subprocess.DEVNULL,
                stdout=into,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as e:
            os.close(out)
            side.release()
            launch.finish()
            return ToolOutput.error(f"Could not start bash in {ctx.workspace}: {e.strerror or e}.")
        finally:
            os.close(into)
        job = Job(proc, on_exit=launch.finish)
        self._background.append(job)
        track(job)
        side.share()  # the relay's and the watcher's
        copier = threading.Thread(target=relay, args=(out, side), daemon=True)
        copier.start()
        threading.Thread(target=watch, args=(job, side, copier), daemon=True).start()
        return ToolOutput.text(
            f"Started in the background with pid {proc.pid} (also its process group id).\n"
            f"Its output goes to {out_path}; Read that file to check progress. A line "
            f"'[exit code N]' is appended when the command finishes. To stop it early, run "
            f"`kill -TERM -{proc.pid}` with Bash. It is stopped when Peri exits."
        )

    def _release_finished(self) -> None:
        """Reap background shells that have exited and left nothing running in their group."""
        done = [j for j in self._background if j.exited.is_set() and not group_alive(j.pgid)]
        for job in done:
            job.release()
            self._background.remove(job)
