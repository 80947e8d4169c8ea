"""`peri mcp serve`: the MCP server over stdio (the official SDK's low-level `Server`). Each call
is checked against the bounds, waits for one of the `--max-concurrent` slots, and runs as an
ordinary Peri session; progress goes out as MCP progress notifications, questions as elicitation
when the client offers it (else headless rules: denied, and reported in the result)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from peri_cli import __version__
from peri_cli.mcpserve.asking import ClientAsker
from peri_cli.mcpserve.bounds import Bounds, Refused
from peri_cli.mcpserve.calls import Call, Outcome, failed, run_call
from peri_cli.mcpserve.rounds import Run, new_state
from peri_cli.mcpserve.tools import tool_list
from peri_cli.sdk import CanUseTool
from peri_cli.sdk.sessionplace import session_workspace

INSTRUCTIONS = (
    "Peri is a coding agent. Call `peri` with a task (and a `cwd`) to have it work in that folder; "
    "it returns its final answer and a session_id, which `peri_reply` continues."
)


@dataclass
class Made:
    """A session this server created: where it works and the mode it runs in."""

    workspace: Path
    mode: str


@dataclass
class PeriServer:
    bounds: Bounds
    made: dict[str, Made] = field(default_factory=dict)
    locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    live: set[Run] = field(default_factory=set)  # runs not yet ended
    paused: dict[str, Run] = field(default_factory=dict)  # by request_state: awaiting answers

    def __post_init__(self) -> None:
        self.slots = asyncio.Semaphore(self.bounds.max_concurrent)

    def lowlevel(self) -> Server[Any]:
        return Server(
            "peri",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
        )

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list(self.bounds))

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if params.request_state is not None:  # the retry of a round that asked a question
            run = self.paused.pop(params.request_state, None)
            if run is None:
                return _result(failed("refused: this question was answered already or expired"))
            run.answer(ctx, params.input_responses)
            return await self._round(run)
        args = dict(params.arguments or {})
        try:
            if params.name == "peri":
                call = self._new(args)
            elif params.name == "peri_reply":
                call = self._reply(args)
            else:
                raise Refused(f"unknown tool {params.name!r}; this server has peri and peri_reply")
        except Refused as e:
            return _result(failed(f"refused: {e}"))
        run = Run(ctx)
        run.start(lambda r: self._run(r, call))
        self.live.add(run)
        return await self._round(run)

    async def _round(self, run: Run) -> types.CallToolResult | types.InputRequiredResult:
        got = await run.next_round(self._park)
        if isinstance(got, Outcome):
            self.live.discard(run)
            return _result(got)
        return got  # type: ignore[no-any-return]

    def _park(self, run: Run) -> str:
        state = new_state()
        self.paused[state] = run
        return state

    async def stop_all(self) -> None:
        """The client went away: every run still going is cancelled, its processes stopped."""
        for run in list(self.live):
            await run.stop()
        self.live.clear()
        self.paused.clear()

    def _new(self, args: dict[str, Any]) -> Call:
        model = args.get("model")
        if model is not None and not isinstance(model, str):
            raise Refused("model must be a string")
        return Call(
            prompt=_prompt(args),
            workspace=self.bounds.call_cwd(args.get("cwd")),
            mode=self.bounds.call_mode(args.get("permission_mode")),
            model=model or None,
            max_turns=self.bounds.call_turns(args.get("max_turns")),
        )

    def _reply(self, args: dict[str, Any]) -> Call:
        prompt = _prompt(args)
        session_id = args.get("session_id")
        if not isinstance(session_id, str) or not session_id.strip():
            raise Refused("session_id must be the session_id a peri call returned")
        session_id = session_id.strip()
        if why := self.bounds.closed():
            raise Refused(why)
        made = self.made.get(session_id)
        if made is None:
            workspace = session_workspace(session_id, os.environ)
            if workspace is None:
                raise Refused(f"no session {session_id} (give the full session_id)")
            if not self.bounds.inside(workspace):
                where = (
                    f"--root {self.bounds.root}"
                    if self.bounds.root is not None
                    else f"this server's folder {self.bounds.here} (no --root)"
                )
                raise Refused(
                    f"session {session_id} works in {workspace}, outside this server's bound "
                    f"{where}"
                )
            made = Made(workspace.resolve(), self.bounds.mode)
        return Call(
            prompt=prompt,
            workspace=made.workspace,
            mode=made.mode,
            max_turns=self.bounds.max_turns,
            resume=session_id,
        )

    async def _run(self, run: Run, call: Call) -> Outcome:
        if self.slots.locked():
            n = self.bounds.max_concurrent
            await run.progress(f"waiting: {n} call{'s' if n > 1 else ''} already running")
        lock = self.locks.setdefault(call.resume, asyncio.Lock()) if call.resume else None
        async with self.slots, lock or contextlib.nullcontext():
            await run.progress("started")
            outcome = await run_call(call, self._asker(run), run.progress)
        if outcome.session_id and call.resume is None:
            self.made[outcome.session_id] = Made(call.workspace, call.mode)
        return outcome

    def _asker(self, run: Run) -> CanUseTool | None:
        """Elicitation when the client offers forms; None (headless rules) otherwise, and
        for a server bound to plan mode: no plan can be approved, so a plan ends the run as
        its result, as headless."""
        caps = run.ctx.session.client_capabilities
        if caps is None or caps.elicitation is None or self.bounds.mode == "plan":
            return None
        return ClientAsker(run.elicit, self.bounds.mode)


def _prompt(args: dict[str, Any]) -> str:
    prompt = args.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise Refused("prompt must be a non-empty string")
    return prompt


def _result(outcome: Outcome) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=outcome.text)],
        structured_content=outcome.structured,
        is_error=outcome.is_error,
    )


async def serve(bounds: Bounds) -> None:
    """Serve one client on stdin/stdout until it goes away (or SIGTERM / SIGHUP): every call
    still running is cancelled and its processes stopped before this returns."""
    peri = PeriServer(bounds)
    server = peri.lowlevel()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, lambda: loop.create_task(_end(peri)))
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await peri.stop_all()


async def _end(peri: PeriServer) -> None:
    """A signal: stop every run, then exit (stdin's reader thread may wait for a line that never
    comes, so the loop is not waited out)."""
    await peri.stop_all()
    os._exit(0)


def run(bounds: Bounds) -> int:
    asyncio.run(serve(bounds))
    return 0
