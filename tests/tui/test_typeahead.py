"""Keys typed before Textual owns the terminal: ICRNL is off from the start (an Enter typed ahead
stays an Enter), and the user's attributes come back after, on a real pseudo-terminal."""

from __future__ import annotations

import os
import termios

import pytest

from peri_cli.tui.typeahead import enter_stays_enter


def test_enter_typed_ahead_stays_a_carriage_return_and_the_terminal_is_restored() -> None:
    leader, follower = os.openpty()
    try:
        before = termios.tcgetattr(follower)
        assert before[0] & termios.ICRNL  # a fresh terminal translates Enter to "\n"
        with enter_stays_enter(follower):
            assert not termios.tcgetattr(follower)[0] & termios.ICRNL
            attrs = termios.tcgetattr(follower)  # what Textual will find; only ICRNL differs
            assert attrs[1:] == before[1:] and attrs[0] | termios.ICRNL == before[0]
            os.write(leader, b"hello\r")  # typed before the app reads: canonical mode holds it
            raw = termios.tcgetattr(follower)
            raw[3] &= ~termios.ICANON  # what Textual's raw mode does next
            termios.tcsetattr(follower, termios.TCSANOW, raw)
            assert os.read(follower, 100) == b"hello\r"  # Enter, not Ctrl+J
        assert termios.tcgetattr(follower) == before  # the user's own attributes again
    finally:
        os.close(leader)
        os.close(follower)


def test_not_a_terminal_is_left_alone(tmp_path: object) -> None:
    read, write = os.pipe()
    try:
        with enter_stays_enter(read):
            pass  # no error: a pipe has no attributes to change
    finally:
        os.close(read)
        os.close(write)
    with pytest.raises(ValueError), enter_stays_enter(-1):
        raise ValueError("the body's own errors still propagate")
