"""Slash commands: one explicit registry; help text is the command's description."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    usage: str = ""
    headless: bool = False  # also runs as `peri -r ID -p "/name"`


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        Command("compact", "Summarize older history now to free context", "[focus]", headless=True),
        Command("clear", "Start an empty visible history in this session", headless=True),
        Command("resume", "Pick a session to resume"),
        Command("fork", "Continue in a copy of this session"),
        Command("model", "Show or switch the model", "[name]"),
        Command("mode", "Show or switch the permission mode", "[mode]"),
        Command("context", "Show what fills the context window"),
        Command("todos", "Show the task list whole (the latest TodoWrite)"),
        # (no usage: Enter on `/agents` lists at once; `/agents stop ID`, `/agents open ID`)
        Command("agents", "SubAgent types and this session's SubAgents; stop ID, open ID"),
        Command("rewind", "Go back to before one of your prompts: code, conversation or both"),
        Command("init", "Ask the model to write or improve the project guide (AGENTS.md)"),
        Command("cost", "Tokens in and out, cache reads and money for this session"),
        Command("copy", "Copy the last reply (or its code block N) to the clipboard", "[N]"),
        Command("meta", "Show the Meta Harness: replaced prompt sections, removed capabilities"),
        Command("status", "Show the model, mode, trust and where each setting came from"),
        Command("permissions", "Show the permission rules in force, where each came from"),
        Command("hooks", "Show the configured hooks and whether each runs here"),
        Command("skills", "List the skills: in force, shadowed and broken"),
        Command("output-style", "Pick the output style new sessions take", "[name]"),
        Command("mcp", "Show the MCP servers; reconnect one", "[reconnect NAME]"),
        Command(
            "plugin",
            "Browse marketplaces; install, enable, disable or uninstall a plugin",
            "[install|enable|disable|uninstall NAME@MARKETPLACE]",
        ),
        Command(
            "sandbox",
            "Show the Bash sandbox; switch auto-allow or the unsandboxed fallback",
            "[auto|fallback on|off]",
        ),
        Command("help", "List commands and keys"),
        Command("exit", "Quit Peri"),
    )
}


@dataclass(frozen=True)
class Invocation:
    command: Command
    argument: str


def parse_command(text: str) -> Invocation | None:
    """A known `/name [argument]`, or None: unknown `/word`s (and paths) go to the model as text."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    name, _, argument = stripped[1:].partition(" ")
    command = COMMANDS.get(name)
    return Invocation(command, argument.strip()) if command else None
