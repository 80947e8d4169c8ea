"""Running command hooks (and the status line's command, `run_command`): each in the workspace,
in its own process group, with Peri's credentials removed, bounded in time and output. What a
hook's results mean is `hooks.interpret`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peri_cli.base import file_watchers, programs
from peri_cli.base.childenv import child_env
from peri_cli.extensions.hookanswers import HookOutcome, HookRun, interpret
from peri_cli.extensions.hookpayloads import encode_payload
from peri_cli.extensions.hooks import Hook, HookEvent

MAX_OUTPUT_BYTES = 1 << 20  # per stream; the rest is read and dropped
_DRAIN_SECONDS = 1.0  # after the hook ended, how long output still in flight may take
_CHUNK = 1 << 16


async def run_hooks(
    event: HookEvent,
    payload: Mapping[str, Any],
    hooks: Sequence[Hook],
    *,
    cwd: Path,
    env: Mapping[str, str],
    hidden_env: Sequence[str] = (),
) -> HookOutcome:
    """Run `hooks` (already selected for this event) side by side and fold their answers."""
    if not hooks:
        return HookOutcome()
    data = encode_payload(payload)
    runs = await asyncio.gather(
        *(
            call_hook(h, data)
            if h.callback is not None
            else run_hook(h, data, cwd=cwd, env=env, hidden_env=hidden_env)
            for h in hooks
        )
    )
    return interpret(event, runs)


async def call_hook(hook: Hook, stdin: bytes) -> HookRun:
    """A program's Python hook: awaited with what a command reads on stdin (a copy of its own),
    the call's id and a context (`{"signal": None}`, as the Claude Agent SDK passes); its dict
    is read as a command's JSON answer. It raising, or outliving its timeout, is reported."""
    assert hook.callback is not None
    data = json.loads(stdin)
    try:
        answer = await asyncio.wait_for(
            hook.callback(data, data.get("tool_use_id"), {"signal": None}), hook.timeout
        )
    except TimeoutError:
        return HookRun(hook, None, timed_out=True)
    except Exception as e:  # a broken callback is reported, never fatal
        return HookRun(hook, None, raised=f"raised {type(e).__name__}: {e}")
    try:
        text = json.dumps(answer if answer is not None else {})
    except (TypeError, ValueError) as e:
        return HookRun(hook, None, raised=f"answered what JSON cannot hold ({e})")
    if not isinstance(answer, dict | None):
        return HookRun(hook, None, raised=f"answered a {type(answer).__name__}, not a dict")
    return HookRun(hook, 0, stdout=text)


async def run_hook(
    hook: Hook,
    stdin: bytes,
    *,
    cwd: Path,
    env: Mapping[str, str],
    hidden_env: Sequence[str] = (),
    max_output: int = MAX_OUTPUT_BYTES,
) -> HookRun:
    """Run one hook with `stdin`; never raises for anything the hook does. The hook's own
    `env` (a plugin's root) is added to its environment; the shell expands `${...}` in it."""
    done = await run_command(
        hook.command,
        stdin,
        cwd=cwd,
        env=env,
        hidden_env=hidden_env,
        extra_env=hook.env,
        timeout=hook.timeout,
        max_output=max_output,
    )
    return HookRun(hook, done.exit_code, done.stdout, done.stderr, done.timed_out, error=done.error)


@dataclass(frozen=True)
class CommandRun:
    """What a command Peri runs itself did (exit code None: it did not finish)."""

    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str | None = None  # it could not be started


async def run_command(
    command: str,
    stdin: bytes,
    *,
    cwd: Path,
    env: Mapping[str, str],
    hidden_env: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float,
    max_output: int = MAX_OUTPUT_BYTES,
) -> CommandRun:
    """Run a hook's or the status line's command through the shell, as hooks run: in `cwd`, its
    own process group (ended with it), credentials removed, bounded in time and output."""
    environment = child_env(env, hidden_env) | dict(extra_env or {})
    try:
        shell, command = _resolved(command, environment, cwd)
    except programs.ProgramMissing as e:
        return CommandRun(None, error=str(e))
    file_watchers.before_outside()  # what a sandboxed command left is judged first
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await _start([shell, "-c", command], cwd, environment)
    except (OSError, ValueError) as e:
        return CommandRun(None, error=str(getattr(e, "strerror", None) or e))
    proc = asyncio.subprocess.Process(transport, protocol, loop)
    assert proc.stdin and proc.stdout and proc.stderr
    out, err = bytearray(), bytearray()
    tasks = [
        asyncio.ensure_future(_feed(proc.stdin, stdin)),
        asyncio.ensure_future(_pump(proc.stdout, out, max_output)),
        asyncio.ensure_future(_pump(proc.stderr, err, max_output)),
    ]
    timed_out = False
    try:
        try:
            # Not proc.wait(): that also waits for the pipes, which a leftover child holds.
            await asyncio.wait_for(protocol.exited.wait(), timeout)
        except TimeoutError:
            timed_out = True
    finally:
        # The command and anything it left running end with it (and on timeout or cancellation).
        _kill_group(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await asyncio.shield(_settle(proc, tasks))
    return CommandRun(
        None if timed_out else transport.get_returncode(),
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        timed_out=timed_out,
    )


async def _start(
    argv: list[str], cwd: Path, environment: dict[str, str]
) -> tuple[asyncio.SubprocessTransport, _Protocol]:
    """Start the hook in its own session, its three pipes connected."""
    loop = asyncio.get_running_loop()
    spawn = asyncio.ensure_future(
        loop.subprocess_exec(
            lambda: _Protocol(loop),
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=environment,
            start_new_session=True,
        )
    )
    try:
        # Shielded: cancelled while the pipes connect, asyncio kills the shell and then waits
        # for pipes that never connected, forever (Python 3.11); let the start finish instead.
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            transport, _ = await spawn
            _kill_group(transport.get_pid())
            transport.close()
        raise


def _resolved(command: str, environment: dict[str, str], cwd: Path) -> tuple[str, str]:
    """The shell and the command to give it, both found outside what sandboxed commands can
    write (`programs`); the hook's environment gets the project's folder and its PATH with those
    folders last. ProgramMissing: no shell, or an interpreter only where commands write."""
    environment["CLAUDE_PROJECT_DIR"] = str(cwd)  # hooks written for Claude Code use it
    environment["PERI_PROJECT_DIR"] = str(cwd)
    path = environment.get("PATH")
    shell = programs.find("bash", path, extra=(cwd,)) or programs.find("sh", path, extra=(cwd,))
    if shell is None:
        raise programs.ProgramMissing(f"no shell: {programs.missing('bash', path, extra=(cwd,))}")
    command = programs.interpreter_command(command, path, extra=(cwd,))
    environment["PATH"] = programs.child_path(path, extra=(cwd,))
    return shell, command


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Says when the process itself has exited, whoever still holds its pipes."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=_CHUNK, loop=loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


async def _settle(proc: asyncio.subprocess.Process, tasks: Sequence[asyncio.Future[None]]) -> None:
    """Let the pipes finish and reap the process, within a bound (a grandchild that left the
    process group may hold the pipes open)."""
    _done, pending = await asyncio.wait(tasks, timeout=_DRAIN_SECONDS)
    for task in pending:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    if pending:
        proc._transport.close()  # type: ignore[attr-defined]  # stop waiting for those pipes
    with contextlib.suppress(ProcessLookupError, TimeoutError):
        await asyncio.wait_for(proc.wait(), _DRAIN_SECONDS)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def _feed(writer: asyncio.StreamWriter, data: bytes) -> None:
    """Send the payload; a hook that does not read it (or exits first) is fine."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
        writer.write(data)
        await writer.drain()
        writer.close()
        await writer.wait_closed()


async def _pump(reader: asyncio.StreamReader, into: bytearray, limit: int) -> None:
    """Read to the end, keeping the first `limit` bytes (the rest is read so the hook never
    blocks on a full pipe)."""
    while chunk := await reader.read(_CHUNK):
        room = limit - len(into)
        if room > 0:
            into += chunk[:room]
