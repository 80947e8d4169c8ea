"""Issue 37 item 4 in the tools: Bash's shell and Grep's `rg` are never ones a sandboxed command
planted in a workspace folder on PATH (an activated `.venv/bin`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from peri_cli.base import programs
from peri_cli.base.tool import ToolContext
from peri_cli.tools.grep import GrepParams, GrepTool
from tests.tools.test_bash_tool import bash, text_of


@pytest.fixture
def planted(ctx: ToolContext, tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """`bash` and `rg` planted in the workspace's `.venv/bin`, first on PATH; the runtime has
    named the workspace as a folder sandboxed commands write. (venv, the planted programs' log)"""
    venv, log = ctx.workspace / ".venv" / "bin", tmp_path / "planted.log"
    venv.mkdir(parents=True)
    for name in ("bash", "rg"):
        (venv / name).write_text(f"#!/bin/sh\necho planted {name} >> {log}\n")
        (venv / name).chmod(0o755)
    owner = object()
    programs.guard(owner, [ctx.workspace])
    yield venv, log
    programs.release(owner)


async def test_item37_4_bash_runs_the_real_shell(
    ctx: ToolContext, planted: tuple[Path, Path]
) -> None:
    venv, log = planted
    env = {"PATH": f"{venv}:{os.environ['PATH']}"}
    ctx = ToolContext(workspace=ctx.workspace, session_dir=ctx.session_dir, env=env)
    out = await bash(ctx, 'echo "$BASH"')
    assert not log.exists(), log.read_text()
    assert ".venv" not in text_of(out) and text_of(out).endswith("bash"), text_of(out)


async def test_item37_4_grep_runs_the_real_rg(
    ctx: ToolContext, planted: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    venv, log = planted
    monkeypatch.setenv("PATH", f"{venv}:{os.environ['PATH']}")
    if programs.find("rg") is None:
        pytest.skip("rg is not installed")
    (ctx.workspace / "a.txt").write_text("needle\n")
    out = await GrepTool().call(GrepParams(pattern="needle"), ctx)
    assert not log.exists(), log.read_text()
    assert "a.txt" in text_of(out)
