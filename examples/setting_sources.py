"""Which settings files a program reads (ported from the Claude Agent SDK's `setting_sources.py`):
with `setting_sources=None` (the default) no settings file is read, so the repository's own
rules do not apply; with `["project"]` its `.claude/settings.json` and `.peri/settings.json` do.

Here the repository denies reading `secrets.txt` (a deny rule needs no trust: it only tightens).
"""

import asyncio
import json
import tempfile
from pathlib import Path

from peri_cli.sdk import PeriOptions, ResultEvent, query


async def read_secrets(repo: Path, sources: list[str] | None) -> str:
    options = PeriOptions(cwd=repo, setting_sources=sources)
    async for message in query("Read secrets.txt", options):
        if isinstance(message, ResultEvent):
            return "denied" if message.permission_denials else "read"
    return "no result"


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:  # a repository of its own, not yours
        repo = Path(folder)
        (repo / "secrets.txt").write_text("the secret is 42\n")
        (repo / ".claude").mkdir()
        rules = {"permissions": {"deny": ["Read(secrets.txt)"]}}
        (repo / ".claude" / "settings.json").write_text(json.dumps(rules))
        for sources in (None, ["user"], ["user", "project"]):
            print(f"{sources}: {await read_secrets(repo, sources)}")


if __name__ == "__main__":
    asyncio.run(main())
