"""Each ACP session streams through a stream worker of its own (`providers/prestart`): the first
takes the one started at launch, which loads the SDK on the other core while `acp` and Peri load;
a later session starts its own rather than importing the SDK on the event loop all sessions
share."""

from __future__ import annotations

from pathlib import Path

from acp import text_block

from tests.acp.conftest import Editor, running_process
from tests.acp.test_acp_signals import alive
from tests.e2e.conftest import Peri


def workers(parent: int) -> list[int]:
    """The living stream workers whose parent is `parent`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"peri_cli.providers.worker" in command and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


async def test_every_session_streams_through_a_worker_of_its_own(
    peri: Peri, editor: Editor
) -> None:
    peri.server.set_script(
        [
            {"when": "first session", "text": "one here"},
            {"when": "second session", "text": "two here"},
        ]
    )
    async with running_process(peri, editor) as (conn, process):
        assert len(workers(process.pid)) == 1  # started at launch, before any session
        cwd = str(peri.workspace)
        for words in ("first session", "second session"):
            session = await conn.new_session(cwd=cwd, mcp_servers=[])
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block(words)])
            assert done.stop_reason == "end_turn"
        assert editor.text() == "one heretwo here"
        assert len(workers(process.pid)) == 2
    assert "Traceback" not in (peri.workspace.parent / "acp-stderr.log").read_text()
