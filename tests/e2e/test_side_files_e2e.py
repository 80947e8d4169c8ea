"""A command's saved output (its side file) end to end (issue 37 item 7): at most 64 MiB, the rest
dropped with a note in the file and in the result; kept in the session's folder; and a resumed
model whose side file is gone is told why. The real `peri -p` against the loopback fake server."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.e2e.conftest import Peri
from tests.e2e.test_tools_e2e import _tool_results

MIB = 1 << 20
CAP = 64 * MIB
DROPPED = "Peri saved no more of this output"
DROPPED_NOTE = (
    "\n[Peri saved no more of this output: a command's saved output is cut at 64 MiB, and the "
    "rest was dropped.]\n"
)
# 100 MB of output, in lines, bounded even for a Peri that saves all of it
HUGE = "yes 0123456789abcdef | head -c 100000000"


def run(peri: Peri, calls: list[dict[str, object]], *args: str) -> tuple[str, list[str]]:
    """One reply of tool calls in a headless run: the session id and the results' texts."""
    peri.server.set_script([{"tool_calls": calls}, {"text": "done"}])
    result = peri.json("-p", "go", "--permission-mode", "bypass", *args)
    assert result["result"] == "done", result
    return result["session_id"], _tool_results(peri.model_calls()[-1])


def bash(command: str, **more: object) -> dict[str, object]:
    return {"name": "Bash", "input": {"command": command, **more}}


def side_file(result: str) -> Path:
    found = re.search(r"(/\S+/outputs/\S+\.txt)", result)
    assert found, result
    return Path(found.group(1))


@pytest.mark.timeout(180)
def test_a_huge_output_is_saved_up_to_64_mib_and_says_so(peri: Peri) -> None:
    session, (result,) = run(peri, [bash(HUGE)])
    saved = side_file(result)
    assert saved.parent == peri.sessions_dir / session / "outputs"  # in the session's folder
    size = saved.stat().st_size
    assert size <= CAP, f"the side file holds {size} bytes"
    with saved.open("rb") as f:
        assert f.read(17) == b"0123456789abcdef\n"
        f.seek(-200, 2)
        assert DROPPED in f.read().decode()
    first_line = result.splitlines()[0]
    assert (
        "100000000 bytes" in first_line
        and f"its first {size - len(DROPPED_NOTE)} bytes" in first_line
    )
    assert "up to 64 MiB" in first_line and "were not saved" in first_line, first_line
    assert result.endswith("\n0123456789abcdef")  # the tail, as ever: 100000000 = 17 * n + 16


@pytest.mark.timeout(180)
def test_a_background_commands_output_is_capped_too(peri: Peri) -> None:
    outputs = peri.home / ".peri" / "projects"
    wait = (
        f"for i in $(seq 300); do grep -qs '{DROPPED}' {outputs}/*/*/outputs/*.txt && break; "
        "sleep 0.1; done; echo waited"
    )
    _, (started, waited) = run(peri, [bash(HUGE, run_in_background=True), bash(wait)])
    saved = side_file(started)
    assert "waited" in waited
    size = saved.stat().st_size
    assert size <= CAP, f"the background output file holds {size} bytes"
    with saved.open("rb") as f:
        f.seek(-200, 2)
        assert DROPPED in f.read().decode()


@pytest.mark.timeout(180)
def test_a_resumed_model_whose_side_file_is_gone_is_told_so(peri: Peri) -> None:
    session, (result,) = run(peri, [bash("seq 1 100000")])
    saved = side_file(result)
    assert saved.is_file()
    shutil.rmtree(saved.parent)  # the session's data went (another machine, a cleanup)
    read = {"name": "Read", "input": {"file_path": str(saved)}}
    _, (answer,) = run(peri, [read], "-r", session)
    assert "saved output of an earlier command" in answer, answer
    assert "no longer there" in answer and "run the command again" in answer.lower(), answer
