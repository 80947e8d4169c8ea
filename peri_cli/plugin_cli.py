"""`peri plugin`: marketplaces and plugins, as Claude Code has them (CONTRACT.md §12). A plugin is
the user's own code once installed, so an install, and an update that changes anything that
runs code, shows it and asks; without a terminal only `--yes` answers."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from peri_cli.sdk.plugins import (
    PluginError,
    Staged,
    add_marketplace,
    describe,
    enabled_table,
    installed,
    marketplace,
    marketplaces,
    peri_home_from_env,
    remove_marketplace,
    set_enabled,
    stage,
    uninstall,
    update_marketplace,
    visible,
)

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
NO_TERMINAL = "no terminal to ask on; run again with --yes to {what} without a question"


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Usage(f"{self.prog}: {message}")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="peri plugin", description="Claude Code plugins and their marketplaces.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    market = sub.add_parser("marketplace", help="add, list, update or remove marketplaces")
    msub = market.add_subparsers(dest="action", required=True, parser_class=_Parser)
    msub.add_parser("add", help="a folder, a git URL or owner/repo").add_argument("source")
    msub.add_parser("list").add_argument("--json", action="store_true")
    update = msub.add_parser("update", help="fetch again, then update its installed plugins")
    update.add_argument("name", nargs="?")
    update.add_argument("--yes", action="store_true", help="no question, for scripts")
    msub.add_parser("remove").add_argument("name")
    install = sub.add_parser("install", help="install NAME@MARKETPLACE")
    install.add_argument("key", metavar="NAME@MARKETPLACE")
    install.add_argument("--yes", action="store_true", help="no question, for scripts")
    sub.add_parser("list").add_argument("--json", action="store_true")
    for action in ("enable", "disable", "uninstall"):
        sub.add_parser(action).add_argument("key", metavar="NAME@MARKETPLACE")
    return p


def plugin_command(argv: Sequence[str], peri_home: Path) -> int:
    try:
        args = _parser().parse_args(argv)
    except _Usage as e:
        print(f"peri: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return _run(args, peri_home)
    except PluginError as e:
        print(visible(f"peri plugin: {e}"), file=sys.stderr)
        return EXIT_FAILED


def _settings_file(peri_home: Path) -> Path:
    return peri_home / "settings.json"


def _run(args: argparse.Namespace, peri_home: Path) -> int:
    if args.command == "marketplace":
        return _marketplace(args, peri_home)
    if args.command == "install":
        return _install(args.key, peri_home, yes=args.yes)
    if args.command == "list":
        return _list(peri_home, as_json=args.json)
    if args.command == "uninstall":
        uninstall(peri_home, args.key)
        set_enabled(_settings_file(peri_home), args.key, None)
        print(f"Uninstalled {args.key}.")
        return EXIT_OK
    if args.key not in installed(peri_home):
        raise PluginError(f"{args.key} is not installed; see `peri plugin list`")
    on = args.command == "enable"
    set_enabled(_settings_file(peri_home), args.key, on)
    print(f"{'Enabled' if on else 'Disabled'} {args.key} (from the next session).")
    return EXIT_OK


def _marketplace(args: argparse.Namespace, peri_home: Path) -> int:
    if args.action == "add":
        found = add_marketplace(peri_home, args.source, cwd=Path.cwd())
        for problem in found.problems:
            print(visible(f"warning: {problem}"), file=sys.stderr)
        print(f"Added marketplace {found.name} ({len(found.plugins)} plugins).")
        return EXIT_OK
    if args.action == "list":
        return _list_marketplaces(peri_home, as_json=args.json)
    if args.action == "remove":
        remove_marketplace(peri_home, args.name)
        print(f"Removed marketplace {args.name}; its installed plugins stay until uninstalled.")
        return EXIT_OK
    names = [args.name] if args.name else sorted(marketplaces(peri_home))
    failed = 0
    for name in names:
        update_marketplace(peri_home, name)
        for key in sorted(k for k in installed(peri_home) if k.endswith(f"@{name}")):
            failed += _update_plugin(key, peri_home, yes=args.yes)
    return EXIT_FAILED if failed else EXIT_OK


def _ask(question: str, what: str, yes: bool) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        raise PluginError(NO_TERMINAL.format(what=what))
    try:
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


def _install(key: str, peri_home: Path, *, yes: bool) -> int:
    staged = stage(peri_home, key)
    try:
        print(describe(staged.parts))
        for problem in staged.parts.problems:
            print(visible(f"  warning: {problem}"))
        if not _ask(f"Install {key}? It runs as your own code.", "install it", yes):
            print("Not installed.")
            return EXIT_FAILED
        staged.commit()
    finally:
        staged.discard()
    set_enabled(_settings_file(peri_home), key, True)
    print(f"Installed and enabled {key} (from the next session).")
    return EXIT_OK


def _update_plugin(key: str, peri_home: Path, *, yes: bool) -> int:
    """One installed plugin brought to its marketplace's copy; a change in what runs asks."""
    staged: Staged | None = None
    try:
        staged = stage(peri_home, key)
        changed = staged.changed
        if changed:
            print(f"{key}: the update changes what runs:")
            print("\n".join(visible(f"  {line}") for line in changed[:60]))
            if not _ask(f"Update {key}?", "update it", yes):
                print(f"{key}: not updated.")
                return 1
        staged.commit()
        print(f"{key}: updated" + ("" if changed else " (nothing that runs changed)") + ".")
        return 0
    except PluginError as e:
        print(visible(f"{key}: {e}"), file=sys.stderr)
        return 1
    finally:
        if staged is not None:
            staged.discard()


def _list(peri_home: Path, *, as_json: bool) -> int:
    enabled = enabled_table(_settings_file(peri_home))
    rows = [
        {
            "name": i.key,
            "version": i.version,
            "enabled": enabled.get(i.key, False),
            "path": str(i.root),
        }
        for i in installed(peri_home).values()
    ]
    return _print_rows(
        rows,
        as_json,
        "No plugins installed.",
        lambda r: (
            f"{r['name']}  {r['version'] or '-'}  {'enabled' if r['enabled'] else 'disabled'}"
        ),
    )


def _list_marketplaces(peri_home: Path, *, as_json: bool) -> int:
    rows: list[dict[str, object]] = []
    for name, known in sorted(marketplaces(peri_home).items()):
        try:
            count: int | None = len(marketplace(peri_home, name)[1].plugins)
        except PluginError:
            count = None
        rows.append({"name": name, "source": known.source, "kind": known.kind, "plugins": count})
    return _print_rows(
        rows,
        as_json,
        "No marketplaces added.",
        lambda r: (
            f"{r['name']}  {r['source']}  "
            f"({'unreadable' if r['plugins'] is None else r['plugins']} plugins)"
        ),
    )


def _print_rows(
    rows: list[dict[str, object]],
    as_json: bool,
    empty: str,
    line: Callable[[dict[str, object]], str],
) -> int:
    if as_json:
        print(json.dumps(rows, ensure_ascii=False))
    elif not rows:
        print(empty)
    for row in rows if not as_json else []:
        print(visible(line(row)))
    return EXIT_OK


def main(argv: Sequence[str]) -> int:
    return plugin_command(argv, peri_home_from_env(os.environ))
