"""`peri mcp serve [--permission-mode M] [--root DIR] [--max-concurrent N] [--max-turns T]`: the
command line of the MCP server face. Bad usage is one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from peri_cli.mcpserve.bounds import ALIASES, STRICTNESS, Bounds

USAGE_EXIT = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_EXIT, f"{self.prog}: error: {message}\n")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="peri mcp",
        description="Peri and the Model Context Protocol. `peri mcp serve` runs Peri as an MCP "
        "server on stdin/stdout, with the tools `peri` and `peri_reply`, for other agents.",
    )
    sub = p.add_subparsers(dest="command", metavar="serve", parser_class=_Parser)
    serve = sub.add_parser(
        "serve",
        help="serve Peri as an MCP server over stdio",
        description="Serve Peri as an MCP server over stdio: `peri` runs a task in a folder and "
        "returns its answer and session_id, `peri_reply` continues a session. The calling "
        "agent is bounded by the flags below.",
    )
    serve.add_argument(
        "--permission-mode",
        choices=[*STRICTNESS, *ALIASES],
        default="default",
        metavar="M",
        help="the loosest mode a call may ask for, and the one it gets when it names none "
        f"(strictest first: {' > '.join(STRICTNESS)}; default: default)",
    )
    serve.add_argument(
        "--root",
        metavar="DIR",
        help="calls work in DIR or a folder under it (symlinks resolved); without it, only in "
        "this folder, and in none when this folder is / or $HOME",
    )
    serve.add_argument(
        "--max-concurrent",
        type=_positive,
        default=2,
        metavar="N",
        help="calls running at once; more wait for a free slot (default: 2)",
    )
    serve.add_argument(
        "--max-turns",
        type=_positive,
        metavar="T",
        help="the most model calls a call may ask for, and its limit when it names none",
    )
    return p


def bounds_from(args: argparse.Namespace, env: dict[str, str] | os._Environ[str]) -> Bounds:
    here = Path.cwd().resolve()
    root = None
    if args.root is not None:
        root = Path(args.root).expanduser()
        if not root.is_dir():
            raise ValueError(f"--root {args.root}: not a folder")
        root = root.resolve()
    home = env.get("HOME")
    return Bounds(
        mode=ALIASES.get(args.permission_mode, args.permission_mode),
        root=root,
        here=here,
        home=Path(home).resolve() if home else None,
        max_concurrent=args.max_concurrent,
        max_turns=args.max_turns,
    )


def mcp_command(argv: Sequence[str]) -> int:
    p = parser()
    args = p.parse_args(list(argv))
    if args.command != "serve":
        p.print_usage(sys.stderr)
        print("peri mcp: error: try `peri mcp serve`", file=sys.stderr)
        return USAGE_EXIT
    try:
        bounds = bounds_from(args, os.environ)
    except ValueError as e:
        print(f"peri mcp serve: error: {e}", file=sys.stderr)
        return USAGE_EXIT
    if why := bounds.closed():
        print(f"peri mcp serve: warning: {why}", file=sys.stderr)
    from peri_cli.mcpserve.server import run

    return run(bounds)
