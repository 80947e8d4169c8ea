"""`peri sessions [--json]`: this workspace's sessions, newest first."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

EXIT_OK = 0


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"peri: error: {message}\n")


def sessions_command(argv: Sequence[str]) -> int:
    parser = _Parser(prog="peri sessions", description="List this workspace's sessions.")
    parser.add_argument("--json", action="store_true", help="one JSON array")
    args = parser.parse_args(argv)
    from peri_cli.base.settings import peri_home_from_env
    from peri_cli.session.store import SessionStore

    store = SessionStore(peri_home_from_env(os.environ), Path.cwd())
    infos = store.list()
    if args.json:
        print(json.dumps([i.to_json() for i in infos], ensure_ascii=False))
        return EXIT_OK
    if not infos:
        print("No sessions in this workspace yet.")
        return EXIT_OK
    for i in infos:
        parent = f"  (fork of {i.parent[:8]})" if i.parent else ""
        unanswered = "" if i.answered else "  (no answer)"  # `-c` passes over it
        print(
            f"{i.id}  {i.updated[:19].replace('T', ' ')}  {i.message_count:>5} msgs  "
            f"{i.title or '(no prompt)'}{parent}{unanswered}"
        )
    return EXIT_OK
