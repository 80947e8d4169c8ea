"""What extends Peri, as it stands in this session: /permissions, /hooks, /skills and /mcp."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.widgets import Static

from peri_cli.base.textsafe import visible
from peri_cli.sdk.plugins import hook_config
from peri_cli.tui.commands.registry import command
from peri_cli.tui.ext_views import hooks_table, lines_view, permissions_table, skills_table

if TYPE_CHECKING:
    from peri_cli.tui.ports import AppPort


@command("permissions", immediate=True)
async def permissions(app: AppPort, _arg: str) -> None:
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


@command("hooks", immediate=True)
async def hooks(app: AppPort, _arg: str) -> None:
    runtime, hooks = app.runtime, app.agent.hooks
    if hooks is not None:
        config, trusted = hooks.config, hooks.trusted
    else:
        config = hook_config(runtime.loaded, runtime.plugins)
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


@command("skills", immediate=True)
async def skills(app: AppPort, _arg: str) -> None:
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


@command("mcp", immediate=True)
async def mcp(app: AppPort, arg: str) -> None:
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
