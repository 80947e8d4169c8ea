"""The app's own commands: /help (commands, prompt forms and keys), /exit and /copy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from peri_cli.base.textsafe import visible
from peri_cli.extensions.commands import COMMANDS
from peri_cli.tui.commands.registry import command
from peri_cli.tui.keymap import INPUT, KEYS

if TYPE_CHECKING:
    from peri_cli.extensions.custom_commands.catalog import CommandRow
    from peri_cli.tui.ports import AppPort

MAX_ABOUT = 120  # characters of a custom command's description in /help


def help_table(custom: Sequence[CommandRow] = ()) -> Table:
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    table.add_column(style="bold cyan")
    table.add_column()
    table.add_row(
        Text("Commands", style="bold"),
        Text("an unknown /word goes to the model as text", style="dim"),
    )
    for c in COMMANDS.values():
        table.add_row(Text(f"/{c.name}{' ' + c.usage if c.usage else ''}"), Text(c.description))
    table.add_row("", "")
    if custom:
        table.add_row(
            Text("Custom commands", style="bold"),
            Text(".claude/commands, ~/.claude/commands, plugins", style="dim"),
        )
        for row in custom:
            table.add_row(*_custom_row(row))
        table.add_row("", "")
    table.add_row(Text("In the prompt", style="bold"), "")
    for form, what in INPUT:
        table.add_row(Text(form), Text(what))
    table.add_row("", "")
    table.add_row(Text("Keys", style="bold"), "")
    for key, what in KEYS:
        table.add_row(Text(key), Text(what))
    return table


def _custom_row(row: CommandRow) -> tuple[Text, Text]:
    """A custom command: the name that reaches it, and its description and origin (file
    text, made visible), and what holds its plain name when another does."""
    command = row.command
    hint = f" {command.argument_hint}" if command.argument_hint else ""
    about = Text(visible(" ".join(command.description.split()))[:MAX_ABOUT])
    about.append(f" ({visible(command.where)})", style="dim")
    if row.shadowed_by:
        about.append(f" · shadowed by {visible(row.shadowed_by)}", style="yellow")
    return Text(visible(f"/{row.call}{hint}")), about


@command("help", immediate=True)
async def show_help(app: AppPort, _arg: str) -> None:
    rows = app.runtime.custom_commands.rows()
    await app.conversation.add(Static(help_table(rows), classes="help"))


@command("exit", immediate=True)
async def quit_app(app: AppPort, _arg: str) -> None:
    app.exit(0)


@command("copy")
async def copy_reply(app: AppPort, arg: str) -> None:
    """The last reply, or its code block N, to the clipboard through OSC 52."""
    from peri_cli.tui.copying import code_blocks, last_reply

    reply = last_reply(app.agent.session.entries)
    if reply is None:
        await app.notice("Nothing to copy: no reply yet.")
        return
    blocks = code_blocks(reply)
    text, what = reply, "the last reply"
    if arg:
        if not arg.isdigit() or not 1 <= int(arg) <= len(blocks):
            have = f"it has {len(blocks)}" if blocks else "it has none"
            await app.notice(f"No code block {visible(arg)} in the last reply; {have}.", "error")
            return
        text, what = blocks[int(arg) - 1], f"code block {arg} of the last reply"
    app.copy_to_clipboard(text)
    hint = ""
    if blocks and not arg:
        hint = f" It has {len(blocks)} code block(s): /copy N copies one."
    await app.notice(f"Copied {what} ({len(text):,} characters) to the clipboard (OSC 52).{hint}")
