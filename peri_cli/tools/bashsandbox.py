"""How a Bash call starts: inside the sandbox when the session has one (the `CommandSandbox`
port), unless the call asked to leave it (approved by the user) or is one of
`excludedCommands`; what the sandbox refused, added to the result; Grep's helper the same way."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from peri_cli.base import programs
from peri_cli.base.messages import TextPart
from peri_cli.base.tool import CommandSandbox, ToolContext, ToolOutput

if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]
    sandboxed: bool = False
    finish: Callable[[], None] = field(default=lambda: None)
    network: Callable[[], str | None] = field(default=lambda: None)  # what the proxy refused


def shell(ctx: ToolContext) -> str:
    """bash's full path, never one a sandboxed command planted on PATH (an activated
    `.venv/bin`); ProgramMissing saying why when there is none."""
    path = ctx.env.get("PATH")
    found = programs.find("bash", path, extra=(ctx.workspace,))
    if found is None:
        raise programs.ProgramMissing(f"Could not start bash: {programs.missing('bash', path)}.")
    return found


def launch(command: str, ctx: ToolContext, *, outside: bool = False) -> Launch:
    """The command line of this call, wrapped by the sandbox when it runs inside (`outside`:
    the call asked to leave it, and was approved). ProgramMissing: no bash to run it."""
    argv = [shell(ctx), "-c", command]
    sandbox = ctx.sandbox
    if sandbox is None or outside or not sandbox.covers(command):
        return Launch(argv, dict(ctx.env))
    wrapped = sandbox.wrap(argv, ctx.env, ctx.workspace)
    return Launch(wrapped.argv, wrapped.env, True, wrapped.finish, wrapped.network)


def explained(
    output: ToolOutput, sandbox: CommandSandbox, cwd: Path, launch: Launch | None = None
) -> ToolOutput:
    """`output` with a line naming each path the sandbox refused, and each domain its proxy
    refused while the command ran, if any."""
    text = "".join(p.text for p in output.content if isinstance(p, TextPart))
    notes = [sandbox.explain(text, cwd), launch.network() if launch is not None else None]
    added = [TextPart(text=f"\n[sandbox] {note}") for note in notes if note]
    if not added:
        return output
    return ToolOutput([*output.content, *added], output.is_error)


def helper_launch(argv: list[str], ctx: ToolContext) -> Launch:
    """A tool's helper process (Grep's search) under the sandbox, when the session has one."""
    if ctx.sandbox is None:
        return Launch(argv, dict(ctx.env))
    wrapped = ctx.sandbox.wrap(argv, ctx.env, ctx.workspace)
    return Launch(wrapped.argv, wrapped.env, sandboxed=True, finish=wrapped.finish)


def helper_roots() -> tuple[Path, ...]:
    """The folders a tool's helper process runs from: the interpreter (and the virtual
    environment around it), Peri's tools (grepsearch.py, walk.py), pathspec, and ripgrep, each
    link and its target. The sandbox shows them where it would hide them (Peri under /tmp)."""
    import pathspec  # walk.py's, already loaded by the tools

    folders = [Path(sys.prefix), Path(sys.base_prefix), Path(__file__).parent]
    folders.append(Path(pathspec.__file__).parent)
    for program in (sys.executable, shutil.which("rg")):
        if program:
            folders += [Path(program).parent, Path(os.path.realpath(program)).parent]
    return tuple(dict.fromkeys(folders))


def finish_after(proc: asyncio.subprocess.Process, launch: Launch) -> None:
    """Tell the sandbox once `proc` has ended (it tidies the mount points it made)."""
    if not launch.sandboxed:
        return

    async def wait() -> None:
        try:
            await proc.wait()
        finally:
            launch.finish()

    _WAITERS.add(task := asyncio.ensure_future(wait()))
    task.add_done_callback(_WAITERS.discard)


_WAITERS: set[asyncio.Future[None]] = set()  # held so they are not collected while waiting
