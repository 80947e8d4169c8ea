"""The command line and composition root: parse, build the objects, hand them down."""

from __future__ import annotations

import os
import sys

from peri_cli import __version__

# typing's own flag, without importing typing: `peri --version` imports nothing but this module
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import NoReturn

    from peri_cli.base.first_look import PreRead
    from peri_cli.sdk.runtime import Runtime

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a tool whose reader went away


class UsageError(Exception):
    """Bad usage: printed as one line on stderr, exit status 2."""


def _parser(prog: str, description: str) -> argparse.ArgumentParser:
    """A parser whose errors raise UsageError (argparse is imported here, not for `--version`)."""
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise UsageError(message)

    return _Parser(prog=prog, description=description)


def build_parser() -> argparse.ArgumentParser:
    from peri_cli.base.modes import MODES

    p = _parser(
        prog="peri",
        description="Peri, a terminal coding agent. `peri sessions [--json]` lists this "
        "workspace's sessions; `peri meta [--json]` shows its Meta Harness switchboard; "
        "`peri config --show-origin [--json]` where each setting came from; "
        "`peri acp` serves editors over the Agent Client Protocol; `peri mcp serve` serves "
        "other agents over MCP; `peri plugin` installs "
        "Claude Code plugins from marketplaces.",
    )
    p.add_argument("prompt", nargs="?", help="a first message (TUI) or the task (-p)")
    p.add_argument("-p", "--print", action="store_true", help="headless: run, print, exit")
    p.add_argument(
        "-c",
        "--continue",
        dest="cont",
        action="store_true",
        help="continue the most recent session of this workspace that got an answer",
    )
    p.add_argument(
        "-r",
        "--resume",
        nargs="?",
        const="",
        metavar="ID",
        help="resume session ID (a unique prefix of 8+ characters); no ID: picker",
    )
    p.add_argument(
        "--fork-session",
        action="store_true",
        help="with -c/-r: continue in a copy; the original is not written",
    )
    p.add_argument("--output-format", choices=("text", "json", "stream-json"), default="text")
    p.add_argument(
        "--include-partial-messages",
        action="store_true",
        help="with -p --output-format stream-json: also text and thinking deltas and "
        "SubAgent progress",
    )
    p.add_argument(
        "--json-schema", metavar="JSON|@FILE", help="with -p: answer as JSON fitting this schema"
    )
    p.add_argument("--model", help="model name for this run")
    p.add_argument("--provider", choices=("anthropic", "openai"))
    p.add_argument("--permission-mode", choices=MODES)
    p.add_argument("--max-turns", type=_positive_int, metavar="N", help="stop after N model calls")
    p.add_argument(
        "--trust-workspace",
        action="store_true",
        help="trust this workspace for this run: apply what its files would loosen "
        "(permission mode, imports from outside it, ...); not remembered",
    )
    _add_rule_flags(p)
    p.add_argument("--version", action="version", version=f"peri {__version__}")
    return p


def _add_rule_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--allowedTools",
        "--allowed-tools",
        dest="allowed_tools",
        action="append",
        default=[],
        metavar="RULES",
        help='permission rules that allow, e.g. "Bash(git diff:*) Edit(src/**)"',
    )
    p.add_argument(
        "--disallowedTools",
        "--disallowed-tools",
        dest="disallowed_tools",
        action="append",
        default=[],
        metavar="RULES",
        help='permission rules that deny, e.g. "Bash(rm:*),WebFetch"',
    )


def _positive_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _meta_command(argv: Sequence[str]) -> int:
    parser = _parser(
        prog="peri meta",
        description="The Meta Harness switchboard for this workspace's current settings: base "
        "prompt sections, capabilities and where each value came from.",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)
    import json
    from pathlib import Path

    from peri_cli.agent.workspace import load_workspace
    from peri_cli.base.settings import peri_home_from_env
    from peri_cli.base.settings_check import SettingsError
    from peri_cli.base.textsafe import visible
    from peri_cli.context.meta import CAPABILITIES, resolve
    from peri_cli.mcp.boot import plan_run
    from peri_cli.mcp.names import tool_prefix
    from peri_cli.tools import capability_tools

    env, workspace = os.environ, Path.cwd().resolve()
    peri_home = peri_home_from_env(env)
    try:
        loaded, trust = load_workspace(
            workspace, peri_home, env, home=Path(env.get("HOME", str(Path.home())))
        )
    except SettingsError as e:
        raise UsageError(str(e)) from e
    board = resolve(loaded, workspace=workspace, peri_home=peri_home)
    plan, _ = plan_run(workspace, env, loaded.mcp_servers, trusted=trust.trusted)
    brings = capability_tools()
    brings.setdefault("mcp", []).extend(f"{tool_prefix(c.name)}*" for c in plan.start)
    if args.json:
        print(json.dumps(board.to_json(brings), ensure_ascii=False))
        return EXIT_OK
    untrusted = trust.warning() if any(i.kind == "meta_harness" for i in trust.ignored) else None
    for line in [*board.warnings, *([untrusted] if untrusted else [])]:
        print(f"peri: warning: {line}", file=sys.stderr)
    summaries = {c.name: c.summary for c in CAPABILITIES}
    out = ["Base prompt sections (true: replaced by its override file)"]
    for row in board.sections:
        state = f"overridden by {row.source}" if row.overridden else "built-in"
        out.append(f"  {row.id:<10} {state}{_set_in(row.setting)}")
    out.append("Capabilities (false: removed whole)")
    for cap in board.capabilities:
        tools = ", ".join(brings.get(cap.name, [])) or "-"
        on = "on " if cap.enabled else "off"
        out.append(f"  {cap.name:<10} {on}  {summaries[cap.name]}; tools: {tools}")
        out[-1] += _set_in(cap.source)
    sub = board.builtin_subagents
    out.append(f"BuiltInSubagents  {'on' if sub.enabled else 'off'}{_set_in(sub.source)}")
    print(visible("\n".join(out)))
    return EXIT_OK


def _set_in(source: str) -> str:
    return "" if source == "built-in" else f"  (set in {source})"


def _acp_command(argv: Sequence[str]) -> int:
    from peri_cli.base.modes import MODES

    parser = _parser(
        prog="peri acp",
        description="Run Peri as an Agent Client Protocol agent on stdin/stdout (for Zed, "
        "JetBrains IDEs, Neovim and other ACP clients).",
    )
    parser.add_argument("--model", help="model name for new sessions")
    parser.add_argument("--provider", choices=("anthropic", "openai"))
    parser.add_argument(
        "--permission-mode",
        choices=MODES,
        help="the starting mode; `bypass` also makes bypass one of the editor's modes",
    )
    parser.add_argument(
        "--trust-workspace",
        action="store_true",
        help="trust the session's workspace for this run: apply what its files would loosen",
    )
    _add_rule_flags(parser)
    args = parser.parse_args(argv)

    def run() -> int:
        from peri_cli.acp.server import run_acp
        from peri_cli.acp.session import Launch

        return run_acp(
            Launch(
                provider=args.provider,
                model=args.model,
                permission_mode=args.permission_mode,
                trust_workspace=args.trust_workspace,
                allowed_tools=args.allowed_tools,
                disallowed_tools=args.disallowed_tools,
            )
        )

    # (the first session's provider takes the worker; the SDK loads on the other core while
    # `acp` and Peri load here. A thread could not overlap those imports: one GIL.)
    return _prestarted(args.provider, run)


def _prestarted(provider: str | None, run: Callable[[], int]) -> int:
    """`run` with a stream worker started first, loading the SDK on another core while Peri
    loads and reads its settings here; the first run to ask takes it (`providers.prestart`)."""
    from peri_cli.base.heldenv import held_env
    from peri_cli.providers import prestart
    from peri_cli.providers.warm import SDK_MODULES, guess_provider

    if (guess := guess_provider(provider, {**os.environ, **held_env()})) in SDK_MODULES:
        prestart.start(guess)
    try:
        return run()
    finally:
        prestart.discard(done=True)  # not taken: the run ended before its first request


def _headless(args: argparse.Namespace) -> int:
    """`peri -p`, its stream worker started first (`_prestarted`)."""

    def run() -> int:
        from peri_cli.headless import STDIN_WAIT, combine_prompt, read_piped_stdin, run_headless

        prompt = args.prompt or ""
        piped = read_piped_stdin(sys.stdin.buffer, wait=STDIN_WAIT if prompt else None)
        return run_headless(args, combine_prompt(prompt, piped))

    return _prestarted(args.provider, run)


def _build(args: argparse.Namespace, pre_read: PreRead | None = None) -> Runtime:
    from peri_cli.sdk.runtime import build_runtime

    return build_runtime(args, os.environ, interactive=not args.print, pre_read=pre_read)


class _CollectorPaused:
    """The garbage collector off while the TUI starts: what start-up allocates lives for the
    whole run, and collecting it meanwhile only costs time. The TUI turns it back on once the
    runtime is built (`tui.sessions.collect_again`); this, however the TUI ends."""

    def __enter__(self) -> None:
        import gc

        gc.disable()

    def __exit__(self, *_: object) -> None:
        import gc

        gc.enable()


def _new_tui_session(args: argparse.Namespace) -> int:
    """A new TUI session in two phases: the first frame (the prompt, and the model the settings
    files name: read once, their text kept for the runtime), then the runtime, built in a thread
    while the user types."""
    from pathlib import Path

    from peri_cli.tui.typeahead import enter_stays_enter

    # before Textual's import: keys typed meanwhile keep their meaning
    with _CollectorPaused(), enter_stays_enter():
        from peri_cli.base.first_look import first_look
        from peri_cli.base.heldenv import held_env
        from peri_cli.tui.app import run_tui

        env = {**held_env(), **os.environ}
        look = first_look(
            Path.cwd().resolve(), env, model_flag=args.model, provider_flag=args.provider
        )
        return run_tui(lambda: _build(args, look.texts), args.prompt, look)


def _resumed_tui_session(args: argparse.Namespace) -> int:
    """-c / -r: the session is read before the first frame (an unknown id ends it here)."""
    from peri_cli.agent.host import StartupError
    from peri_cli.tui.typeahead import enter_stays_enter

    with _CollectorPaused(), enter_stays_enter():
        try:
            runtime = _build(args)
        except StartupError as e:
            print(f"peri: error: {e}", file=sys.stderr)
            return e.exit_code
        from peri_cli.tui.app import run_tui

        return run_tui(runtime, args.prompt)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line. When stdout's reader goes away (`peri sessions | head`), the run
    ends quietly with EXIT_PIPE, as a Unix tool ended by SIGPIPE does."""
    try:
        status = _main(argv)
        sys.stdout.flush()  # what is still buffered may meet the closed pipe too
    except BrokenPipeError:
        return _reader_gone()
    return status


def _reader_gone() -> int:
    # Python flushes stdout once more as it exits; pointed at /dev/null, that flush is silent.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return EXIT_PIPE


def _subcommand(name: str) -> Callable[[Sequence[str]], int] | None:
    """`peri sessions|meta|acp|mcp|plugin|config ...`; each imports what it needs when run."""
    if name == "plugin":
        from peri_cli.plugin_cli import main

        return main
    if name == "config":
        from peri_cli.cli_config import config_command

        return config_command
    if name == "sessions":
        from peri_cli.cli_sessions import sessions_command

        return sessions_command
    if name == "mcp":  # `peri mcp serve`: its first call's provider as `-p`'s (`_prestarted`)
        from peri_cli.mcpserve.cli import mcp_command

        return lambda argv: _prestarted(None, lambda: mcp_command(argv))
    return {"meta": _meta_command, "acp": _acp_command}.get(name)


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list == ["--version"]:  # what argparse would print, without importing it
        print(f"peri {__version__}")
        return EXIT_OK
    from peri_cli.base.heldenv import hide_provider_env

    # first, before any thread or child exists: the keys leave the environment `/proc` shows
    hide_provider_env()
    try:
        if args_list and (subcommand := _subcommand(args_list[0])) is not None:
            return subcommand(args_list[1:])
        args = build_parser().parse_args(args_list)
        if args.fork_session and not (args.cont or args.resume is not None):
            raise UsageError("--fork-session needs -c/--continue or -r/--resume")
        if args.json_schema is not None and not args.print:
            raise UsageError("--json-schema needs -p (structured output is for headless runs)")
        if args.print and args.resume == "":
            raise UsageError("-p with -r needs a session ID (the picker is interactive)")
        if not args.print and not sys.stdin.isatty():
            raise UsageError(
                "the TUI needs a terminal on stdin; to run on piped input use -p, "
                "e.g. `echo 'explain x' | peri -p`"
            )
        if not args.print and not args.cont and args.resume is None:
            return _new_tui_session(args)
        if args.print:
            return _headless(args)
        return _resumed_tui_session(args)
    except UsageError as e:
        print(f"peri: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
