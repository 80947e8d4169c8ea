"""The TUI side of the slash commands: one handler per command in `core.commands.COMMANDS`."""

from __future__ import annotations

import asyncio
import difflib
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from peri_cli.base.models import known_models, model_info
from peri_cli.base.provider import model_listed
from peri_cli.base.textsafe import visible
from peri_cli.context.meta import BUILTIN_SUBAGENTS, MetaState, Resolution, capability
from peri_cli.context.meta import resolve as resolve_meta
from peri_cli.extensions.commands import COMMANDS, Invocation
from peri_cli.extensions.hooks import hook_config_from_layers
from peri_cli.permissions.asking import MODES
from peri_cli.tui.context import agent_report, estimate_request
from peri_cli.tui.ext_views import hooks_table, lines_view, permissions_table, skills_table
from peri_cli.tui.format import tokens
from peri_cli.tui.screens.context_view import ContextView
from peri_cli.tui.widgets.separator import Separator

if TYPE_CHECKING:
    from peri_cli.session.costs import CostReport
    from peri_cli.tui.app import PeriApp
    from peri_cli.tui.screens.rewind_picker import RewindChoice

# These act at once even while a turn runs; the others wait in the queue for the turn to end.
IMMEDIATE = frozenset(
    {"help", "exit", "mode", "model", "context", "agents", "permissions", "hooks", "skills", "mcp"}
)

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
    (
        "Ctrl+↓",
        "while SubAgents run: focus their strip (↓ too, from an empty prompt); ↑/↓ pick one, "
        "Enter opens its pane, x stops it, Esc goes back",
    ),
    (
        "In a pane",
        "↑/↓ PgUp/PgDn scroll · End follows · ←/→ the next SubAgent · x stop · Esc close",
    ),
    ("Ctrl+↑", "go to the pending approval (it waits there while you type a message)"),
    ("PgUp / PgDn", "scroll the conversation (the approval, while one is pending)"),
    ("Ctrl+End", "back to the bottom, following new output"),
    ("Ctrl+O", "expand every fold (tool calls, thinking, summaries), or fold them all"),
    ("Enter, click", "on a fold's title: expand or fold it; typing still goes to the prompt"),
    (
        "1–5, y a p n",
        "answer an approval: allow once (y), allow its rules for the session (a), always in "
        "this project (p), deny (n), deny with a note to the model (5)",
    ),
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
        await app.session_start("clear")

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

    async def cmd_agents(self, arg: str) -> None:
        """The types (built-in and custom, and the files that could not be read), this
        session's children with their state; `stop ID` stops one, `open ID` shows its pane."""
        app = self.app
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

    async def cmd_permissions(self, _arg: str) -> None:
        app = self.app
        policy = app.agent.policy
        rules = policy.rules
        if rules.rules:
            table = permissions_table(
                rules, trusted=policy.trusted, workspace=policy.workspace, home=policy.home
            )
            await app.conversation.add(Static(table, classes="help"))
        else:
            await app.notice(
                "No permission rules. Add them under permissions {allow, ask, deny} in "
                "~/.peri/settings.json, .peri/settings.json or .peri/settings.local.json, e.g. "
                '"allow": ["Bash(git diff:*)", "Edit(src/**)"].'
            )
        for problem in rules.problems:
            await app.notice(problem, "warning")
        await app.notice(
            f"Permission mode: {policy.mode}. Rules are evaluated deny, then ask, then allow; "
            "what none of them covers follows the mode."
        )

    async def cmd_hooks(self, _arg: str) -> None:
        app = self.app
        runtime, hooks = app.runtime, app.agent.hooks
        if hooks is not None:
            config, trusted = hooks.config, hooks.trusted
        else:
            config = hook_config_from_layers(runtime.loaded.layers if runtime.loaded else ())
            trusted = runtime.trust is not None and runtime.trust.trusted
        if config.hooks:
            table = hooks_table(
                config, trusted=trusted, workspace=runtime.workspace, home=app.agent.policy.home
            )
            await app.conversation.add(Static(table, classes="help"))
        else:
            await app.notice(
                "No hooks configured. Add them under hooks in ~/.peri/settings.json or the "
                "project's .peri/settings.json (Claude Code's format)."
            )
        for problem in config.problems:
            await app.notice(problem, "warning")

    async def cmd_skills(self, _arg: str) -> None:
        app = self.app
        entries = app.runtime.skills.entries()
        if not app.runtime.meta.enabled("skills"):
            await app.notice("Skills are turned off for this session (meta_harness: skills).")
            return
        if not entries:
            await app.notice(
                "No skills found. A skill is a folder with a SKILL.md, in ~/.claude/skills, "
                "~/.agents/skills, ~/.peri/skills or the project's .claude/skills or "
                ".agents/skills."
            )
            return
        await app.conversation.add(Static(skills_table(entries), classes="help"))
        await app.notice("Run a skill with /<name> [arguments]; the model loads them by name too.")

    async def cmd_mcp(self, arg: str) -> None:
        app = self.app
        runtime = app.runtime
        if arg:
            verb, _, name = arg.partition(" ")
            if verb != "reconnect" or not name.strip():
                await app.notice("Usage: /mcp, or /mcp reconnect NAME", "error")
                return
            await app.notice(await asyncio.to_thread(runtime.mcp_reconnect, name.strip()))
            return
        lines = runtime.mcp_statuses()
        if not lines:
            await app.notice(
                "No MCP servers. Configure them under mcpServers in ~/.peri/settings.json or "
                "the project's .mcp.json (Claude Code's format)."
            )
            return
        view = lines_view("MCP servers", lines)
        prompts = runtime.mcp_prompt_commands()
        if prompts:
            view.append("\n\nPrompts (run as slash commands)", style="bold")
            for p in prompts:
                view.append("\n  ")
                view.append(visible(f"/{p.name} {p.usage}".rstrip()), style="cyan")
                if p.description:
                    view.append(visible(f"  {' '.join(p.description.split())[:120]}"), style="dim")
        await app.conversation.add(Static(view, classes="help"))
        await app.notice("Reconnect a server with /mcp reconnect NAME.")

    # --- /rewind /init /cost /copy (issue 15) ---------------------------------------------------

    async def cmd_rewind(self, _arg: str) -> None:
        """Pick a prompt, then what to restore; Enter applies at once."""
        from peri_cli.session.rewind import changed_counts, prompts, record
        from peri_cli.tui.screens.rewind_picker import RewindPicker

        app = self.app
        session = app.agent.session
        entries = await asyncio.to_thread(record, session)
        listed = prompts(entries)
        if not listed:
            await app.notice("Nothing to rewind: no prompt of yours in this session yet.")
            return

        changed = changed_counts(entries, [p.id for p in listed])
        await app.push_screen(RewindPicker(listed, changed), callback=self._rewind_chosen)

    async def _rewind_chosen(self, choice: RewindChoice | None) -> None:
        app = self.app
        if choice is None:
            app.prompt_area.input.focus()
            return
        board = app.agent_board
        if app.busy or (board is not None and board.running()):
            # (the picker stays open while a queued prompt starts; SubAgents may be writing)
            await app.notice(
                "Not rewound: a turn or a SubAgent is still running. Stop it (Esc; "
                "/agents stop ID) or let it finish, then /rewind again.",
                "warning",
            )
            return
        try:
            await self._rewind(choice)
        except OSError as e:  # the session file cannot be written (disk full, read-only)
            await app.notice(
                f"The rewind could not be recorded in the session file ({e.strerror or e}).",
                "error",
            )
        app.prompt_area.input.focus()

    async def _rewind(self, choice: RewindChoice) -> None:
        app = self.app
        if choice.kind in ("both", "conversation"):
            from peri_cli.session.rewind import rewind_conversation

            rewind_conversation(app.agent.session, choice.prompt.id)
            app.status.set(context_tokens=None, cache_share=None)
            await app.show_session(attached=False)  # (no SessionStart: nothing began)
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

    async def _rewind_code(self, prompt_id: str, *, overwrite: bool = False) -> list[str]:
        """Restore the files changed since the prompt; offers to overwrite the ones changed
        outside Peri since. Returns the paths restored."""
        from peri_cli.session.checkpoints import Checkpointer
        from peri_cli.session.rewind import apply_code, plan_code, record

        app = self.app
        session = app.agent.session
        entries = await asyncio.to_thread(record, session)
        plan = await asyncio.to_thread(plan_code, entries, prompt_id)
        if overwrite:  # the others were restored the first time
            plan.files = plan.conflicts
        keeper = Checkpointer(session)
        result = await asyncio.to_thread(apply_code, keeper, plan, overwrite=overwrite)
        shown = [self._path(p) for p in result.restored]
        if shown:
            await app.notice("Restored: " + ", ".join(shown))
        elif not plan.files:
            await app.notice("No file was changed by Peri since that prompt.")
        try:
            session.append(*result.records)
        except OSError as e:  # restored, but this restore itself cannot be rewound
            await app.notice(
                f"The restore could not be recorded in the session file ({e.strerror or e}).",
                "error",
            )
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
        from peri_cli.context.initguide import guide_target, init_prompt
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
        from peri_cli.session.costs import session_costs
        from peri_cli.session.rewind import record

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


def agents_table(app: PeriApp) -> Table:
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
