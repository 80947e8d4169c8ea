"""The status line in the real `peri` process under tmux (CONTRACT §12): an untrusted project's
`statusLine` is named in the trust question and, declined, never runs (the file it would create
is absent); the user's own runs, its colours reach the terminal as colours and its OSC title
write only as visible text, never as the sequence itself."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.test_tmux import start_peri
from tests.fakeserver import FakeServer

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.mark.timeout(240)
@pytest.mark.parametrize("size", [(120, 40), (60, 20)])
def test_an_untrusted_projects_status_line_never_runs_and_the_users_is_drawn_safely(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    workspace, marker = tmp_path / "ws", tmp_path / "MARKER"
    (workspace / ".peri").mkdir(parents=True)
    repo_line = {"type": "command", "command": f"touch {marker}; echo REPO-LINE"}
    (workspace / ".peri" / "settings.json").write_text(json.dumps({"statusLine": repo_line}))
    (tmp_path / "home").mkdir()
    user_line = {
        "type": "command",
        "command": "cat > /dev/null; printf '\\033[32mUSER-LINE\\033[0m \\033]2;pwned\\007 end\\n'",
    }
    (tmp_path / "home" / "settings.json").write_text(json.dumps({"statusLine": user_line}))
    with FakeServer([{"text": "hello"}]) as server:
        tmux = start_peri(tmp_path, server.url, size=size)
        try:
            asked = tmux.wait_for(lambda s: "Trust this folder?" in s, timeout=60)
            assert "status line command" in asked and "REPO-LINE" in asked
            tmux("send-keys", "-t", "peri", "n")
            screen = tmux.wait_for(lambda s: "USER-LINE" in s, timeout=60)
            assert "USER-LINE ␛]2;pwned␇ end" in screen
            tmux("send-keys", "-t", "peri", "-l", "hi")
            tmux("send-keys", "-t", "peri", "Enter")
            tmux.wait_for(lambda s: "hello" in s, timeout=60)
            colours = tmux("capture-pane", "-p", "-e", "-t", "peri")
        finally:
            tmux("kill-server")
    assert not marker.exists()
    raw = (tmp_path / "pane.bytes").read_bytes()
    assert b"\x1b]2;pwned" not in raw  # the title write never reached the terminal
    line = next(row for row in colours.splitlines() if "USER-LINE" in row)
    assert line.index("\x1b[") < line.index("USER-LINE")  # drawn with a colour of its own
