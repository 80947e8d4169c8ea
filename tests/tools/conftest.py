from pathlib import Path

import pytest

from peri_cli.base.tool import ToolContext


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return ToolContext(workspace=workspace, session_dir=tmp_path / "session")
