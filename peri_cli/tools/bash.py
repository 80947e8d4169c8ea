"""Bash: run a shell command in the workspace, in a session of its own, started by the reaper
(`reaping.py`), which ends whatever it left running when it ends. Background commands are
`bashjobs.py`, the output the model reads `bashoutput.py`."""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from pathlib import Path

from pydantic import BaseModel, Field

from peri_cli.base.programs import ProgramMissing
from peri_cli.base.tool import PydanticTool, ToolContext, ToolKind, ToolOutput, ToolTraits
from peri_cli.tools import reaping
from peri_cli.tools.bashjobs import Job, end_jobs, track, watch
from peri_cli.tools.bashoutput import Capture, report, stream_progress
from peri_cli.tools.bashsandbox import Launch
from peri_cli.tools.bashsandbox import explained as _explained
from peri_cli.tools.bashsandbox import launch as _launch
from peri_cli.tools.sidefile import SideFile, new_side_file, relay

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
# After the command ended, how long to wait for output still in flight before giving up on the pipe.
_DRAIN_SECONDS = 0.5
# How long a background command may take to start (the reaper's own start included).
_START_SECONDS = 10.0


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


class _Shell(asyncio.Protocol):
    """Feeds the command's merged stdout/stderr to a capture; says when the pipe has closed."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self.pipe_closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.capture.feed(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.pipe_closed.done():
            self.pipe_closed.set_result(None)


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
        try:
            launch = _launch(p.command, ctx, outside=p.dangerouslyDisableSandbox)
        except (ProgramMissing, FileNotFoundError) as e:  # no bash or bwrap but planted ones
            return ToolOutput.error(str(e))
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
        """End background commands and every process they started (call at session end;
        Peri's exit calls it too). SIGTERM, then SIGKILL after the grace."""
        jobs, self._background = self._background, []
        end_jobs(jobs, self._kill_grace)

    async def _run(
        self, timeout_ms: int, ctx: ToolContext, notes: list[str], launch: Launch
    ) -> ToolOutput:
        capture = Capture(new_side_file(ctx.session_dir))
        loop = asyncio.get_running_loop()
        out_r, out_w = os.pipe()
        try:
            command = reaping.start(
                launch.argv, launch.env, ctx.workspace, out_w, grace=self._kill_grace
            )
        except OSError as e:
            os.close(out_r)
            return ToolOutput.error(f"Could not start bash: {e.strerror or e}.")
        finally:
            os.close(out_w)
        shell = _Shell(capture)
        opened: list[asyncio.BaseTransport] = []
        live: asyncio.Future[None] | None = None
        try:
            pipe, _ = await loop.connect_read_pipe(lambda: shell, os.fdopen(out_r, "rb", 0))
            opened.append(pipe)
            status_pipe, status = await command.watch()
            opened.append(status_pipe)
            live = asyncio.ensure_future(stream_progress(capture, ctx))
            return await self._until_done(
                command,
                status,
                shell=shell,
                capture=capture,
                timeout_ms=timeout_ms,
                notes=notes,
                ctx=ctx,
            )
        finally:
            if live is not None:
                live.cancel()
            for transport in opened:
                transport.close()
            command.close()  # (its control pipe closed: a command still running is ended)

    async def _until_done(
        self,
        command: reaping.Command,
        status: reaping.StatusProtocol,
        *,
        shell: _Shell,
        capture: Capture,
        timeout_ms: int,
        notes: list[str],
        ctx: ToolContext,
    ) -> ToolOutput:
        """Wait for the command's shell; its keeper then ends what it left running."""
        try:
            said = await asyncio.wait_for(asyncio.shield(status.until("exited")), timeout_ms / 1000)
            if said.failure is not None:
                reason = said.failure.strerror or said.failure
                return ToolOutput.error(f"Could not start bash in {ctx.workspace}: {reason}.")
            said = await status.until("ended")
        except TimeoutError:
            command.stop()
            await asyncio.shield(status.until("ended"))
            await asyncio.wait([shell.pipe_closed], timeout=_DRAIN_SECONDS)
            body = capture.finish() or "(no output)"
            return ToolOutput.error(
                f"Command timed out after {timeout_ms} ms; it and every process it started were "
                f"killed. If it needs longer, pass a larger timeout (max {MAX_TIMEOUT_MS}) or "
                f"use run_in_background.\nOutput before the timeout:\n{body}"
            )
        except asyncio.CancelledError:
            command.stop()
            await asyncio.shield(status.until("ended"))
            raise
        # Only a process its keeper could not end (another user's) may still hold the pipe.
        await asyncio.wait([shell.pipe_closed], timeout=_DRAIN_SECONDS)
        return ToolOutput.text(
            report(
                capture,
                said.code,
                notes,
                shell.pipe_closed.done(),
                left=said.left,
                survivors=said.survivors,
            )
        )

    def _start_background(self, ctx: ToolContext, launch: Launch) -> ToolOutput:
        self._release_finished()
        side = SideFile(new_side_file(ctx.session_dir))
        if not side.open():
            launch.finish()
            return ToolOutput.error(f"Could not start bash in {ctx.workspace}: {side.error}.")
        out_path = side.path
        out, into = os.pipe()  # through Peri, which keeps the side file under its cap
        try:
            command = reaping.start(
                launch.argv,
                launch.env,
                ctx.workspace,
                into,
                grace=self._kill_grace,
                background=True,
            )
        except OSError as e:
            os.close(out)
            side.release()
            launch.finish()
            return ToolOutput.error(f"Could not start bash in {ctx.workspace}: {e.strerror or e}.")
        finally:
            os.close(into)  # the command's now: the relay ends when all it started close theirs
        said = command.read_until("started", timeout=_START_SECONDS)
        if said.pid is None:
            command.close()
            os.close(out)
            side.release()
            launch.finish()
            reason = said.failure.strerror if said.failure else "it did not start in time"
            return ToolOutput.error(f"Could not start bash in {ctx.workspace}: {reason}.")
        job = Job(command, said.pid, on_exit=launch.finish)
        self._background.append(job)
        track(job)
        side.share()  # the relay's and the watcher's
        copier = threading.Thread(target=relay, args=(out, side), daemon=True)
        copier.start()
        threading.Thread(target=watch, args=(job, side, copier), daemon=True).start()
        return ToolOutput.text(
            f"Started in the background with pid {said.pid} (also its process group id).\n"
            f"Its output goes to {out_path}; Read that file to check progress. A line "
            f"'[exit code N]' is appended when the command finishes. To stop it early, run "
            f"`kill -TERM -{said.pid}` with Bash. It, and every process it started, is stopped "
            f"when Peri exits."
        )

    def _release_finished(self) -> None:
        """Forget background commands that have ended with all they started."""
        self._background = [j for j in self._background if not j.ended.is_set()]
