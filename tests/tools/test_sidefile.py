"""A command's saved output: capped, with a note where it was cut (issue 37 item 7)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from peri_cli.tools.sidefile import DROPPED_NOTE, MAX_SIDE_FILE_BYTES, SideFile, relay

ROOM = 4096  # what the file keeps for its notes below the cap


def test_past_the_cap_the_rest_is_dropped_and_noted(tmp_path: Path) -> None:
    side = SideFile(tmp_path / "outputs" / "x.txt", cap=ROOM + 100)
    assert side.open()
    side.write(b"a" * 60)
    side.write(b"b" * 60)
    side.write(b"c" * 1000)
    side.append_note("\n[exit code 0]\n")
    side.release()
    data = side.path.read_bytes()
    assert data == b"a" * 60 + b"b" * 40 + DROPPED_NOTE.encode() + b"\n[exit code 0]\n"
    assert (side.saved, side.dropped) == (100, 1020)
    assert len(DROPPED_NOTE.encode()) + 100 < ROOM and MAX_SIDE_FILE_BYTES == 64 << 20


def test_a_folder_that_cannot_be_made_is_an_error_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "outputs").write_text("a file where the folder would go")
    side = SideFile(tmp_path / "outputs" / "x.txt")
    assert not side.open() and side.error and "could not be saved" in side.error
    side.write(b"lost")  # nothing to write to: ignored
    side.release()


def test_the_relay_drains_its_pipe_and_the_last_owner_closes(tmp_path: Path) -> None:
    side = SideFile(tmp_path / "x.txt", cap=ROOM + 10)
    assert side.open()
    side.share()
    out, into = os.pipe()
    copier = threading.Thread(target=relay, args=(out, side))
    copier.start()
    os.write(into, b"0123456789" * 3)  # past the cap: read and dropped, never blocking
    os.close(into)
    copier.join(timeout=30)
    assert not copier.is_alive()
    side.append_note("[done]")  # the other owner (the watcher) still writes
    side.release()
    assert side.path.read_bytes() == b"0123456789" + DROPPED_NOTE.encode() + b"[done]"
    side.append_note("after both released")
    assert side.path.read_bytes().endswith(b"[done]")
