"""/agents: the SubAgent types and this session's SubAgents; stop one or open its pane."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from peri_cli.base.textsafe import visible
from peri_cli.tui.commands.registry import command

if TYPE_CHECKING:
    from peri_cli.tui.ports import AppPort


@command("agents", immediate=True)
async def agents(app: AppPort, arg: str) -> None:
    """The types (built-in and custom, and the files that could not be read), this
    session's children with their state; `stop ID` stops one, `open ID` shows its pane."""
    manager, board = app.runtime.subagents, app.agent_board
    verb, _, which = arg.partition(" ")
    if verb in ("stop", "open"):
        found = board.find(which) if board is not None and which.strip() else []
        if len(found) != 1:
            listed = ", ".join(
                f"{c.id[:8]} ({visible(c.label)})"
                for c in (board.children.values() if board else [])
            )
            why = (
                "Which one?"
                if not which.strip()
                else f"No single SubAgent id starts with {visible(which.strip())!r}."
            )
            await app.notice(f"{why} This session's SubAgents: {listed or 'none'}.", "warning")
            return
        child = found[0]
        if verb == "open":
            await app.open_agent_pane(child.id)
        elif manager is not None and manager.stop(child.id):
            await app.notice(f"Stopping SubAgent {child.id[:8]} ({child.label}).")
        else:
            await app.notice(
                f"SubAgent {child.id[:8]} ({child.label}) is not running ({child.state}).",
                "warning",
            )
        return
    if arg.strip():
        await app.notice(
            f"Unknown /agents argument {visible(arg)!r}: try /agents, "
            "/agents stop ID or /agents open ID.",
            "error",
        )
        return
    await app.conversation.add(Static(agents_table(app), classes="help"))


def agents_table(app: AppPort) -> Table:
    """SubAgent types and this session's SubAgents, as text (never markup)."""
    from peri_cli.tui.format import elapsed

    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    manager, board = app.runtime.subagents, app.agent_board
    table.add_row(Text("SubAgent types", style="bold"), Text("Agent(subagent_type=…)", style="dim"))
    catalog = manager.catalog if manager is not None else None
    if catalog is None or not catalog.types:
        table.add_row("", Text("none: SubAgents are off in this session", style="dim"))
    else:
        for kind in sorted(catalog.types.values(), key=lambda t: t.name):
            tools = "the main agent's tools" if kind.tools is None else ", ".join(kind.tools)
            if kind.read_only:
                tools = ", ".join(
                    n for n, t in app.agent.tools.direct.items() if t.traits.read_only
                )
            row = Text(visible(kind.description))
            row.append(f"  ({visible(kind.source)}; {visible(tools)})", style="dim")
            table.add_row(Text(visible(kind.name)), row)
        for problem in catalog.problems:
            table.add_row(Text("skipped", style="yellow"), Text(visible(problem), style="yellow"))
    table.add_row("", "")
    children = list(board.children.values()) if board is not None else []
    table.add_row(
        Text("This session", style="bold"),
        Text("/agents stop ID · /agents open ID · Ctrl+↓ for the strip", style="dim"),
    )
    if not children:
        table.add_row("", Text("no SubAgents yet", style="dim"))
    now = app.clock()
    for child in children:
        row = Text(visible(child.description or "(no description)"))
        row.append(f"  {child.type} · {child.state}", style="dim")
        spent = child.elapsed(now)
        if spent is not None:
            row.append(f" · {elapsed(spent)}", style="dim")
        if child.background:
            row.append(" · background", style="dim")
        if child.detail:
            row.append(f" ({visible(child.detail)})", style="dim")
        table.add_row(Text(child.id[:8]), row)
    return table
