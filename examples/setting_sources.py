"""Which settings files a program reads (ported from the Claude Agent SDK's `setting_sources.py`):
with `setting_sources=None` (the default) no settings file is read, so the repository's own
rules do not apply; with `["project"]` its `.claude/settings.json` and `.peri/settings.json` do.

Here the repository denies reading `secrets.txt` (a deny rule needs no trust: it only tightens).
"""

import asyncio
import json
from pathlib import Path

from peri_cli.sdk import PeriOptions, ResultEvent, query


async def read_secrets(sources: list[str] | None) -> str:
    options = PeriOptions(setting_sources=sources)
    async for message in query("Read secrets.txt", options):
        if isinstance(message, ResultEvent):
            return "denied" if message.permission_denials else "read"
    return "no result"


async def main() -> None:
    settings = Path(".claude/settings.json")
    if not settings.exists():
        settings.parent.mkdir(exist_ok=True)
        settings.write_text(json.dumps({"permissions": {"deny": ["Read(secrets.txt)"]}}))
    for sources in (None, ["user"], ["user", "project"]):
        print(f"{sources}: {await read_secrets(sources)}")


if __name__ == "__main__":
    asyncio.run(main())
