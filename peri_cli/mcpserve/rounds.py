"""A call's run across the rounds of one `tools/call`. Through MCP 2025-11-25 the server asks the
client mid-call (`elicitation/create` while the call is open); from 2026-07-28 a server cannot
send requests, so a question ends the round with an `InputRequiredResult` (the question, and a
`request_state` naming the paused run), and the client's retry carries the answer in. The run
itself goes on in a task of its own meanwhile, whichever protocol the client speaks."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext

from peri_cli.mcpserve.calls import Outcome, failed

ASK_KEY = "peri-question"


@dataclass
class _Ask:
    message: str
    schema: dict[str, Any]
    answer: asyncio.Future[dict[str, Any]]


@dataclass(eq=False)  # each run is itself (kept in sets)
class Run:
    """One call's run: its task, the request it reports to now, its questions and its end."""

    ctx: ServerRequestContext[Any]
    task: asyncio.Task[None] | None = None
    steps: int = 0
    _out: asyncio.Queue[_Ask | Outcome] = field(default_factory=asyncio.Queue)
    _asked: _Ask | None = None

    def start(self, work: Callable[[Run], Awaitable[Outcome]]) -> None:
        async def body() -> None:
            try:
                outcome = await work(self)
            except Exception as e:  # never a traceback for the client: one line
                outcome = failed(f"the run failed: {type(e).__name__}: {e}")
            self._out.put_nowait(outcome)

        self.task = asyncio.get_running_loop().create_task(body())

    async def progress(self, message: str) -> None:
        self.steps += 1
        with contextlib.suppress(Exception):  # a client gone quiet does not stop the run
            await self.ctx.session.report_progress(self.steps, None, message)

    async def elicit(self, message: str, schema: dict[str, Any]) -> dict[str, Any]:
        """The client's answer: asked at once where the connection allows it, else in the
        next round's result."""
        ctx = self.ctx
        if ctx.session.can_send_request:
            answer = await ctx.session.elicit_form(
                message, schema, related_request_id=ctx.request_id
            )
            return answer.model_dump(mode="json")
        asked = _Ask(message, schema, asyncio.get_running_loop().create_future())
        self._out.put_nowait(asked)
        return await asked.answer

    def answer(
        self, ctx: ServerRequestContext[Any], responses: types.InputResponses | None
    ) -> None:
        """A retried round: it reports from now on, and brings the answer to the question."""
        self.ctx = ctx
        asked, self._asked = self._asked, None
        got = (responses or {}).get(ASK_KEY)
        if asked is not None and not asked.answer.done():
            result = got.model_dump(mode="json") if isinstance(got, types.ElicitResult) else None
            asked.answer.set_result(result or {"action": "cancel"})

    async def next_round(self, park: Callable[[Run], str]) -> Any:
        """This round's result: the run's end, or its next question (the run parked under
        the state `park` returns). A round that is cancelled (the client went away) stops
        the run and what it started."""
        try:
            item = await self._out.get()
        except BaseException:
            await self.stop()
            raise
        if isinstance(item, Outcome):
            return item
        self._asked = item
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=item.message, requested_schema=item.schema)
        )
        return types.InputRequiredResult(
            input_requests={ASK_KEY: request}, request_state=park(self)
        )

    async def stop(self) -> None:
        task = self.task
        if task is not None and not task.done():
            task.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.wait({task})


def new_state() -> str:
    return uuid.uuid4().hex
