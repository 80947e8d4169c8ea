"""Issue 37 item 9 in a real terminal: a bracketed paste (tmux `paste-buffer -p`, newlines sent
as CR as terminals do) reaches the model exactly once, byte for byte; a paste of 20+ lines shows
as `[Pasted text #N +L lines]` and is sent whole, and Up brings the whole text back."""

from __future__ import annotations

import contextlib
import json
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_tmux import Tmux, start_peri, start_server

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SNIPPET = (
    "def parse(line):\n"
    '    """Split one record."""\n'
    "    head, _, rest = line.partition(':')\n"
    "\n"
    "\treturn head.strip(), rest  # a tab, and a blank line above"
)
LOG = "\n".join(f"2026-01-0{i % 9 + 1} 12:00:{i:02d} ERROR worker {i} failed" for i in range(30))


def _requests(url: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{url}/_requests", timeout=10) as response:
        found: list[dict[str, Any]] = json.load(response)
    return [r for r in found if r["path"].startswith("/v1/messages") and r["status"] == 200]


def _last_user_text(body: dict[str, Any]) -> str:
    """The text of the request's last user message, exactly as sent."""
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(b["text"] for b in content if b.get("type") == "text")


@contextlib.contextmanager
def _peri(tmp_path: Path, size: tuple[int, int]) -> Iterator[tuple[Tmux, str]]:
    server = start_server(tmp_path, [{"text": "first reply"}, {"text": "second reply"}])
    url = next(server)
    tmux = start_peri(tmp_path, url, size=size)
    try:
        tmux.wait_for(lambda s: "Message Peri" in s)
        yield tmux, url
    finally:
        tmux("kill-server")
        with contextlib.suppress(StopIteration):
            next(server)


def _paste(tmux: Tmux, tmp_path: Path, text: str) -> None:
    source = tmp_path / "clipboard.txt"
    source.write_text(text)
    tmux("load-buffer", "-b", "clip", str(source))
    tmux("paste-buffer", "-p", "-b", "clip", "-t", "peri")  # bracketed, LF sent as CR


@pytest.mark.parametrize("size", [(120, 40), (60, 20)], ids=["120x40", "60x20"])
def test_a_pasted_snippet_is_sent_once_exactly(tmp_path: Path, size: tuple[int, int]) -> None:
    with _peri(tmp_path, size) as (tmux, url):
        tmux("send-keys", "-t", "peri", "-l", "look at this: ")
        tmux.wait_for(lambda s: "look at this:" in s)
        _paste(tmux, tmp_path, SNIPPET)
        tmux.wait_for(lambda s: "a tab, and a" in s)
        tmux("send-keys", "-t", "peri", "Enter")
        tmux.wait_for(lambda s: "first reply" in s)
        (request,) = _requests(url)
    assert _last_user_text(request["body"]) == "look at this: " + SNIPPET


@pytest.mark.parametrize("size", [(120, 40), (60, 20)], ids=["120x40", "60x20"])
def test_a_long_paste_shows_as_one_line_is_sent_whole_and_up_brings_it_back(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    with _peri(tmp_path, size) as (tmux, url):
        _paste(tmux, tmp_path, LOG)
        screen = tmux.wait_for(lambda s: "[Pasted text #1 +30 lines]" in s)
        assert "worker 1 failed" not in screen  # the lines themselves are not in the prompt
        tmux("send-keys", "-t", "peri", "-l", " why?")
        tmux.wait_for(lambda s: "+30 lines] why?" in s)
        tmux("send-keys", "-t", "peri", "Enter")
        tmux.wait_for(lambda s: "first reply" in s)
        tmux.wait_for(lambda s: "Message Peri" in s)  # the prompt is empty again
        tmux("send-keys", "-t", "peri", "Up")
        tmux.wait_for(lambda s: "worker 29 failed why?" in s)  # the whole text, its end in view
        tmux("send-keys", "-t", "peri", "Enter")
        tmux.wait_for(lambda s: "second reply" in s)
        first, second = _requests(url)
    assert _last_user_text(first["body"]) == LOG + " why?"
    assert _last_user_text(second["body"]) == LOG + " why?"
