"""`peri config --show-origin [--json]`: the settings files this workspace reads (Peri's and
Claude Code's, lowest first) and each value they set with the file it came from."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"peri config: error: {message}\n")


def config_command(argv: Sequence[str]) -> int:
    """Exit status 0, or 2 for bad usage or a settings file Peri cannot use."""
    parser = _Parser(
        prog="peri config",
        description="Where this workspace's settings come from: the files read (Peri's and "
        "Claude Code's) and the file or variable of each value set.",
    )
    parser.add_argument("--show-origin", action="store_true", help="each value with its file")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)
    if not args.show_origin:
        parser.error("nothing to show; try peri config --show-origin [--json]")
    from peri_cli.agent.workspace import load_workspace
    from peri_cli.base.settings import peri_home_from_env
    from peri_cli.base.settings_check import SettingsError
    from peri_cli.base.settings_origin import file_line, origin_rows
    from peri_cli.base.textsafe import visible

    env, workspace = os.environ, Path.cwd().resolve()
    try:
        loaded, trust = load_workspace(
            workspace, peri_home_from_env(env), env, home=Path(env.get("HOME", str(Path.home())))
        )
    except SettingsError as e:
        print(f"peri config: error: {e}", file=sys.stderr)
        return 2
    rows = origin_rows(loaded, trusted=trust.trusted)
    for line in [*loaded.warnings, *filter(None, [trust.warning()])]:
        print(f"peri: warning: {line}", file=sys.stderr)
    if args.json:
        files = [
            {"path": str(layer.path), "scope": layer.scope, "claude_code": layer.claude_code}
            for layer in loaded.layers
        ]
        print(json.dumps({"files": files, "settings": [r.to_json() for r in rows]}))
        return 0
    out = ["Settings files read (lowest precedence first):"]
    out += [f"  {file_line(layer)}" for layer in loaded.layers] or ["  none"]
    out.append("Values set (anything else is the built-in default):")
    out += [f"  {row.describe()}" for row in rows] or ["  none"]
    print(visible("\n".join(out)))
    return 0
