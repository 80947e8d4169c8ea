"""A status line's output on screen: SGR colours kept as styles, every other control sequence
(OSC title and clipboard writes, cursor moves, screen wipes, bells) shown as visible text."""

from __future__ import annotations

from peri_cli.tui.ansi_line import ansi_text


def test_sgr_colours_and_attributes_become_styles() -> None:
    text = ansi_text("\x1b[1;31mred\x1b[0m plain \x1b[38;5;82mlime\x1b[38;2;1;2;3m rgb\x1b[m end")
    assert text.plain == "red plain lime rgb end"
    spans = {text.plain[s.start : s.end]: s.style for s in text.spans}
    red = spans["red"]
    assert not isinstance(red, str) and red.bold and red.color is not None
    assert red.color.number == 1  # ANSI red
    lime = spans["lime"]
    assert not isinstance(lime, str) and lime.color is not None and lime.color.number == 82
    rgb = spans[" rgb"]
    assert not isinstance(rgb, str) and rgb.color is not None
    assert rgb.color.get_truecolor() == (1, 2, 3)
    assert " plain " not in spans and " end" not in spans  # after a reset: unstyled


def test_every_other_sequence_is_made_visible() -> None:
    line = "a\x1b]0;title\x07b\x1b]52;c;ZXZpbA==\x07c\x1b[2Jd\x1b[10;1He\rf\x08g\x1b[?1049h"
    text = ansi_text(line)
    assert "\x1b" not in text.plain and "\x07" not in text.plain and "\r" not in text.plain
    assert "␛]0;title␇b" in text.plain and "␛[2Jd" in text.plain and "␛[10;1He" in text.plain
    assert "␍f␈g" in text.plain and "␛[?1049h" in text.plain
    assert text.spans == []


def test_a_line_is_drawn_on_one_row() -> None:
    text = ansi_text("x" * 500)
    assert text.no_wrap and text.overflow == "ellipsis"
