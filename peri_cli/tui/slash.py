"""The TUI side of the slash commands: one handler per command in `core.commands.COMMANDS`."""

from __future__ import annotations

import asyncio
import difflib
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from peri_cli.core.commands import COMMANDS, Invocation
from peri_cli.core.meta import BUILTIN_SUBAGENTS, MetaState, Resolution, capability
from peri_cli.core.meta import resolve as resolve_meta
from peri_cli.core.models import known_models, model_info
from peri_cli.core.permissions import MODES
from peri_cli.core.provider import model_listed
from peri_cli.core.textsafe import visible
from peri_cli.tui.context import agent_report, estimate_request
from peri_cli.tui.format import tokens
from peri_cli.tui.screens.context_view import ContextView
from peri_cli.tui.widgets.separator import Separator

if TYPE_CHECKING:
    from peri_cli.core.costs import CostReport
    from peri_cli.tui.app import PeriApp
    from peri_cli.tui.screens.rewind_picker import RewindChoice

# These act at once even while a turn runs; the others wait in the queue for the turn to end.
IMMEDIATE = frozenset({"help", "exit", "mode", "model", "context"})

# The one key table of the TUI, as /help shows it (the README repeats it; `app.PeriApp.BINDINGS`
# and the widgets' bindings implement it).
KEYS = [
    ("Enter", "send the prompt (queued while a turn runs)"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("↑ / ↓", "prompt history (all sessions); move in a menu or an approval"),
    ("Tab", "complete a /command or @path; else move focus to the folds"),
    (
        "Esc",
        "the first that applies: close a popup or menu · deny the pending approval · "
        "back to the prompt (from a fold) · interrupt the running turn. It never clears "
        "typed text",
    ),
    ("Esc Esc", "on an empty prompt while idle: /rewind (back to before one of your prompts)"),
    ("Ctrl+C", "interrupt the running turn, else clear the prompt; twice when idle quits"),
    (
        "Shift+Tab",
        "cycle the permission mode: default → accept-edits → plan (→ bypass if started in it)",
    ),
    (
        "Ctrl+R",
        "search the prompt history (fuzzy, this workspace first); Enter puts it in the prompt",
    ),
    ("PgUp / PgDn", "scroll the conversation (the approval, while one is pending)"),
    ("Ctrl+End", "back to the bottom, following new output"),
    ("Ctrl+O", "expand every fold (tool calls, thinking, summaries), or fold them all"),
    ("Enter, click", "on a fold's title: expand or fold it; typing still goes to the prompt"),
    ("1 2 3, y a n", "answer an approval: allow once, allow for the session, deny"),
    ("Ctrl+L", "redraw the screen"),
]

# What the prompt understands besides commands (/help and the README show it).
INPUT = [
    ("@path", "attach a file (as Read shows it), a folder's listing or an image, on send"),
    ("paste an image", "a path to an image, or image data: attached, shown as [image #N]"),
    ("!command", "run a shell command yourself (no approval); the model sees it and its output"),
]


def help_table() -> Table:
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
    table.add_row(Text("In the prompt", style="bold"), "")
    for form, what in INPUT:
        table.add_row(Text(form), Text(what))
    table.add_row("", "")
    table.add_row(Text("Keys", style="bold"), "")
    for key, what in KEYS:
        table.add_row(Text(key), Text(what))
    return table


def meta_table(session: MetaState, board: Resolution) -> Table:
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
        found = capability(cap.name)
        if found is not None and found.tools:
            label.append(f" ({', '.join(found.tools)})", style="dim")
        frozen = "on" if session.enabled(cap.name) else "off"
        table.add_row(label, Text(frozen), now("on" if cap.enabled else "off", cap.source))
    sub = board.builtin_subagents
    frozen = "on" if session.builtin_subagents else "off"
    table.add_row(
        Text(BUILTIN_SUBAGENTS), Text(frozen), now("on" if sub.enabled else "off", sub.source)
    )
    return table


class SlashCommands:
    def __init__(self, app: PeriApp) -> None:
        self.app = app

    async def run(self, invocation: Invocation) -> None:
        handler = getattr(self, f"cmd_{invocation.command.name}")
        await handler(invocation.argument)

    async def cmd_help(self, _arg: str) -> None:
        await self.app.conversation.add(Static(help_table(), classes="help"))

    async def cmd_exit(self, _arg: str) -> None:
        self.app.exit(0)

    async def cmd_model(self, arg: str) -> None:
        app, agent = self.app, self.app.agent
        # The provider's own list, asked once per provider (None: it has none, or is offline).
        listed = await agent.provider.list_models()
        if not arg:
            names = ", ".join(visible(n[:60]) for n in (listed or known_models())[:12])
            await app.notice(
                f"Model: {agent.model} (context window {tokens(app.runtime.context_window)}). "
                f"Switch with /model NAME, e.g. {names}, …"
            )
            return
        if listed is not None and not model_listed(arg, listed):
            near = difflib.get_close_matches(arg, listed, n=5, cutoff=0.3)
            few = [*near, *(n for n in listed if n not in near)][:5]
            more = ", …" if len(listed) > len(few) else ""
            await app.notice(
                f"The provider has no model {arg!r}; still using {agent.model}. "
                f"It has: {', '.join(visible(n[:60]) for n in few)}{more}",
                "error",
            )
            return
        app.runtime.model = agent.model = arg
        known = model_info(arg).known
        await app.notice(
            f"Model switched to {arg} (context window {tokens(app.runtime.context_window)})"
            + ("" if known else "; this model is not in Peri's table, so the window is a guess"),
            "info" if known else "warning",
        )
        app.refresh_status()

    async def cmd_mode(self, arg: str) -> None:
        app, agent = self.app, self.app.agent
        if not arg:
            await app.notice(
                f"Permission mode: {agent.policy.mode}. Switch with /mode {' | '.join(MODES)}."
            )
            return
        if arg not in MODES:
            await app.notice(f"Unknown mode {arg!r}; choose one of {', '.join(MODES)}.", "error")
            return
        app.runtime.mode = agent.policy.mode = arg
        await app.notice(f"Permission mode is now {arg}.")
        app.refresh_status()

    async def cmd_meta(self, _arg: str) -> None:
        app = self.app
        runtime = app.runtime
        board = await asyncio.to_thread(
            resolve_meta,
            runtime.loaded or runtime.settings,
            workspace=runtime.workspace,
            peri_home=runtime.peri_home,
        )
        await app.conversation.add(Static(meta_table(runtime.meta, board), classes="help"))
        note = "Changes to meta_harness apply to new sessions; `peri meta --json` for scripts."
        for line in board.warnings:
            await app.notice(line, "warning")
        await app.notice(note)

    async def cmd_context(self, _arg: str) -> None:
        app = self.app
        report = await asyncio.to_thread(
            agent_report, app.agent, app.counter, app.runtime.context_window
        )
        await app.push_screen(ContextView(report))

    async def cmd_clear(self, _arg: str) -> None:
        app = self.app
        before = app.status.status.context_tokens
        app.agent.session.clear()
        after = await asyncio.to_thread(estimate_request, app.agent, app.estimator)
        await app.conversation.clear_screen(Separator("clear", before, after))
        app.status.set(context_tokens=after, context_estimated=True, cache_share=None)

    async def cmd_compact(self, arg: str) -> None:
        app = self.app
        if not app.agent.view():
            await app.notice("Nothing to compact: the history the model sees is empty.")
            return
        compactor = app.agent.compactor
        if compactor is None:
            await app.notice(
                "Compaction is not available in this build yet: nothing was changed. "
                "/clear empties the visible history instead.",
                "warning",
            )
            return
        await app.run_events(app.agent.compact_now(arg or None), "compacting")

    async def cmd_resume(self, _arg: str) -> None:
        await self.app.open_picker()

    async def cmd_fork(self, _arg: str) -> None:
        app = self.app
        old = app.agent.session.id
        if await app.switch_session(old, fork=True, rerender=False):
            await app.notice(
                f"Forked: you are now in session {app.agent.session.id[:8]}, a copy of "
                f"{old[:8]}; the original is left as it was."
            )

    # --- /rewind /init /cost /copy (issue 15) ---------------------------------------------------

    async def cmd_rewind(self, _arg: str) -> None:
        """Pick a prompt, then what to restore; Enter applies at once."""
        from peri_cli.core.rewind import plan_code, prompts, record
        from peri_cli.tui.screens.rewind_picker import RewindPicker

        app = self.app
        session = app.agent.session
        entries = await asyncio.to_thread(record, session)
        listed = prompts(entries)
        if not listed:
            await app.notice("Nothing to rewind: no prompt of yours in this session yet.")
            return

        def counts() -> dict[str, int]:
            return {p.id: len(plan_code(entries, p.id).files) for p in listed[:50]}

        changed = await asyncio.to_thread(counts)
        await app.push_screen(RewindPicker(listed, changed), callback=self._rewind_chosen)

    async def _rewind_chosen(self, choice: RewindChoice | None) -> None:
        app = self.app
        if choice is None:
            app.prompt_area.input.focus()
            return
        if choice.kind in ("both", "conversation"):
            from peri_cli.core.rewind import rewind_conversation

            rewind_conversation(app.agent.session, choice.prompt.id)
            app.status.set(context_tokens=None, cache_share=None)
            await app.show_session()
            app.prompt_area.set_text(choice.prompt.text)
            await app.notice(
                f"Rewound the conversation to before prompt {choice.prompt.number}; its text is "
                "back in the prompt. The hidden messages stay in the session file."
            )
        restored: list[str] = []
        if choice.kind in ("both", "code"):
            restored = await self._rewind_code(choice.prompt.id)
        if restored and choice.kind == "code":  # the conversation stays: tell the model
            app.agent.inbox.append(
                "[The user restored these files to how they were before an earlier prompt; "
                "read them again before relying on them: " + ", ".join(restored) + "]"
            )
        app.prompt_area.input.focus()

    async def _rewind_code(self, prompt_id: str, *, overwrite: bool = False) -> list[str]:
        """Restore the files changed since the prompt; offers to overwrite the ones changed
        outside Peri since. Returns the paths restored."""
        from peri_cli.core.checkpoints import Checkpointer
        from peri_cli.core.rewind import apply_code, plan_code, record

        app = self.app
        session = app.agent.session
        entries = await asyncio.to_thread(record, session)
        plan = await asyncio.to_thread(plan_code, entries, prompt_id)
        if overwrite:  # the others were restored the first time
            plan.files = plan.conflicts
        keeper = Checkpointer(session)
        result = await asyncio.to_thread(apply_code, keeper, plan, overwrite=overwrite)
        session.append(*result.records)
        shown = [self._path(p) for p in result.restored]
        if shown:
            await app.notice("Restored: " + ", ".join(shown))
        elif not plan.files:
            await app.notice("No file was changed by Peri since that prompt.")
        for path, why in result.failed:
            await app.notice(f"Could not restore {self._path(path)}: {why}", "error")
        for change in plan.files:
            if change.note is not None:
                await app.notice(
                    f"Could not restore {self._path(change.path)}: {change.note}", "warning"
                )
        if result.skipped and not overwrite:
            await self._offer_overwrite(prompt_id, [self._path(f.path) for f in result.skipped])
        return shown

    async def _offer_overwrite(self, prompt_id: str, paths: list[str]) -> None:
        from textual.content import Content

        from peri_cli.tui.format import plain
        from peri_cli.tui.screens.rewind_picker import Choice

        app = self.app
        await app.notice("Not restored, changed outside Peri since: " + ", ".join(paths), "warning")
        question = Content.assemble(
            f"{len(paths)} file{'s were' if len(paths) != 1 else ' was'} changed outside Peri "
            "since: ",
            plain(", ".join(paths)),
            ". Overwrite with the state before that prompt?",
        )
        answers = [(False, "Keep them as they are"), (True, "Overwrite them")]

        async def answered(overwrite: bool | None) -> None:
            if overwrite:
                await self._rewind_code(prompt_id, overwrite=True)

        await app.push_screen(Choice(question, answers), callback=answered)

    def _path(self, path: Path) -> str:
        try:
            return visible(str(path.relative_to(self.app.runtime.workspace)))
        except ValueError:
            return visible(str(path))

    async def cmd_init(self, _arg: str) -> None:
        from peri_cli.core.initguide import guide_target, init_prompt
        from peri_cli.tui.notices import no_key_problem
        from peri_cli.tui.widgets.user_message import UserMessage

        app = self.app
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

    async def cmd_cost(self, _arg: str) -> None:
        from peri_cli.core.costs import session_costs
        from peri_cli.core.rewind import record

        app = self.app
        session = app.agent.session

        def report():  # type: ignore[no-untyped-def]
            return session_costs(record(session), session.dir, app.agent.model)

        costs = await asyncio.to_thread(report)
        await app.conversation.add(Static(cost_table(costs), classes="help"))

    async def cmd_copy(self, arg: str) -> None:
        """The last reply, or its code block N, to the clipboard through OSC 52."""
        from peri_cli.tui.copying import code_blocks, last_reply

        app = self.app
        reply = last_reply(app.agent.session.entries)
        if reply is None:
            await app.notice("Nothing to copy: no reply yet.")
            return
        blocks = code_blocks(reply)
        text, what = reply, "the last reply"
        if arg:
            if not arg.isdigit() or not 1 <= int(arg) <= len(blocks):
                have = f"it has {len(blocks)}" if blocks else "it has none"
                await app.notice(
                    f"No code block {visible(arg)} in the last reply; {have}.", "error"
                )
                return
            text, what = blocks[int(arg) - 1], f"code block {arg} of the last reply"
        app.copy_to_clipboard(text)
        hint = ""
        if blocks and not arg:
            hint = f" It has {len(blocks)} code block(s): /copy N copies one."
        await app.notice(
            f"Copied {what} ({len(text):,} characters) to the clipboard (OSC 52).{hint}"
        )


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
