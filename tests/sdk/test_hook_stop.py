"""Issue 40 item 6 through the SDK: a command hook's `"continue": false` ends the prompt with a
result whose error is the hook's `stopReason`; the client goes on with the next prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from peri_cli.sdk import PeriClient, ResultEvent, ToolResultEvent
from tests.fakeserver import FakeServer
from tests.sdk.conftest import model_calls, options_for

STOP = '{"continue": false, "stopReason": "the build is frozen"}'


def with_hook(root: Path, event: str, body: str) -> None:
    script = root / "home" / f"{event}.sh"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text("#!/bin/sh\ncat >/dev/null\n" + body)
    script.chmod(0o755)
    hooks = {event: [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(script)}]}]}
    settings = root / "home" / ".peri" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"hooks": hooks}))


async def test_a_pre_tool_use_stop_ends_the_prompt_and_the_next_one_runs(
    server: FakeServer, tmp_path: Path
) -> None:
    with_hook(tmp_path, "PreToolUse", f"echo '{STOP}'\n")
    bash = {"name": "Bash", "input": {"command": "touch made.txt"}}
    server.set_script([{"tool_calls": [bash]}, {"text": "next prompt answered"}])
    options = options_for(server, tmp_path, permission_mode="bypass", setting_sources=["user"])
    async with PeriClient(options) as client:
        await client.send("make it")
        first: list[Any] = [e async for e in client.events()]
        await client.send("and now?")
        second: list[Any] = [e async for e in client.events()]
    result = first[-1]
    assert isinstance(result, ResultEvent) and result.is_error
    assert result.error == "the build is frozen"
    (refused,) = [e for e in first if isinstance(e, ToolResultEvent)]
    assert refused.is_error and "the build is frozen" in refused.content
    assert not (tmp_path / "ws" / "made.txt").exists()
    assert isinstance(second[-1], ResultEvent) and not second[-1].is_error
    assert second[-1].result == "next prompt answered"
    assert len(model_calls(server)) == 2  # none after the stop; one for the next prompt
