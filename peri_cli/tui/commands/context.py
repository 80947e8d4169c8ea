"""What fills the context and what it costs: /context, /cost, the task list (/todos), the Meta
Harness (/meta), and /init (the model writes or improves the project guide)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual.content import Content
from textual.widgets import Static

from peri_cli.base.textsafe import visible
from peri_cli.context.meta import BUILTIN_SUBAGENTS, MetaState, Resolution
from peri_cli.context.meta import resolve as resolve_meta
from peri_cli.tui.commands.registry import command
from peri_cli.tui.context import agent_report
from peri_cli.tui.format import tokens
from peri_cli.tui.screens.context_view import ContextView

if TYPE_CHECKING:
    from peri_cli.session.costs import CostReport
    from peri_cli.tui.ports import AppPort


@command("context", immediate=True)
async def context(app: AppPort, _arg: str) -> None:
    report = await asyncio.to_thread(
        agent_report, app.agent, app.counter, app.runtime.context_window
    )
    await app.push_screen(ContextView(report))


@command("todos", immediate=True)
async def todos(app: AppPort, _arg: str) -> None:
    from peri_cli.context.projection import visible_entries
    from peri_cli.context.todos import latest_todos
    from peri_cli.tui.widgets.todo_strip import todo_rows

    listed = latest_todos(visible_entries(app.agent.session.entries))
    if not listed:
        await app.notice("No task list yet: the model keeps one with TodoWrite for longer work.")
        return
    done = sum(t.status == "completed" for t in listed)
    head = Content.styled(f"Tasks: {done} of {len(listed)} done", "bold")
    await app.conversation.add(Static(Content("\n").join([head, *todo_rows(listed)])))


@command("meta")
async def meta(app: AppPort, _arg: str) -> None:
    runtime = app.runtime
    board = await asyncio.to_thread(
        resolve_meta,
        runtime.loaded or runtime.settings,
        workspace=runtime.workspace,
        peri_home=runtime.peri_home,
    )
    table = meta_table(runtime.meta, board, runtime.capability_tools())
    await app.conversation.add(Static(table, classes="help"))
    note = "Changes to meta_harness apply to new sessions; `peri meta --json` for scripts."
    for line in board.warnings:
        await app.notice(line, "warning")
    await app.notice(note)


def meta_table(session: MetaState, board: Resolution, brings: Mapping[str, Sequence[str]]) -> Table:
    """The Meta Harness: what this session froze, and what the settings say now (with where
    each value came from); file paths made visible, never markup."""
    table = Table(box=None, padding=(0, 2, 0, 0))
    table.add_column("Meta Harness", style="bold cyan")
    table.add_column("this session")
    table.add_column("settings now")

    def now(word: str, source: str) -> Text:
        return Text(visible(word if source == "built-in" else f"{word} ({source})"))

    for row in board.sections:
        frozen = "replaced" if row.id in session.overridden else "built-in"
        current = now("replaced", row.source) if row.overridden else now("built-in", row.setting)
        table.add_row(Text(row.id), Text(frozen), current)
    for cap in board.capabilities:
        label = Text(cap.name)
        if brings.get(cap.name):
            label.append(f" ({', '.join(brings[cap.name])})", style="dim")
        frozen = "on" if session.enabled(cap.name) else "off"
        table.add_row(label, Text(frozen), now("on" if cap.enabled else "off", cap.source))
    sub = board.builtin_subagents
    frozen = "on" if session.builtin_subagents else "off"
    table.add_row(
        Text(BUILTIN_SUBAGENTS), Text(frozen), now("on" if sub.enabled else "off", sub.source)
    )
    return table


@command("cost")
async def cost(app: AppPort, _arg: str) -> None:
    from peri_cli.session.costs import session_costs
    from peri_cli.session.rewind import record

    session = app.agent.session

    def report():  # type: ignore[no-untyped-def]
        return session_costs(record(session), session.dir, app.agent.model)

    costs = await asyncio.to_thread(report)
    await app.conversation.add(Static(cost_table(costs), classes="help"))


def cost_table(costs: CostReport) -> Table:
    from peri_cli.tui.format import cost

    table = Table(box=None, padding=(0, 2, 0, 0))
    table.add_column("Cost", style="bold cyan")
    for name in ("input", "output", "cache read", "cache write", "cache share", "money"):
        table.add_column(name, justify="right")
    rows = [("this session", costs.main)]
    if costs.subagent_count:
        rows.append((f"SubAgents ({costs.subagent_count})", costs.subagents))
        rows.append(("total", costs.total))
    for label, spend in rows:
        u = spend.usage
        share = f"{u.cache_read_share:.0%}" if u.prompt_tokens else "–"
        money = cost(spend.usd) + (" (estimated)" if spend.estimated else "")
        table.add_row(
            label,
            tokens(u.input_tokens),
            tokens(u.output_tokens),
            tokens(u.cache_read_input_tokens),
            tokens(u.cache_creation_input_tokens),
            share,
            money,
        )
    return table


@command("init")
async def init(app: AppPort, _arg: str) -> None:
    from peri_cli.context.initguide import guide_target, init_prompt
    from peri_cli.tui.notices import no_key_problem
    from peri_cli.tui.widgets.user_message import UserMessage

    name, exists = guide_target(app.runtime.workspace)
    await app.conversation.add(UserMessage("/init"))
    problem = no_key_problem(app.runtime)
    if problem:
        await app.notice(problem, "error")
        return
    verb = "improve" if exists else "write"
    await app.notice(f"Asking the model to study the repository and {verb} {name}.")
    prompt = init_prompt(app.runtime.workspace)
    await app.run_events(app.agent.run(prompt), prompt_turn=True)
