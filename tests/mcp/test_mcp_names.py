"""Wrapped names: `mcp__<server>__<tool>`, only characters and lengths providers accept."""

from __future__ import annotations

import re

from peri_cli.mcp.names import MAX_NAME, prompt_command, tool_name, tool_prefix

VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_plain_names() -> None:
    assert tool_name("time", "get_current_time") == "mcp__time__get_current_time"
    assert tool_prefix("time") == "mcp__time__"
    assert prompt_command("gh", "review") == "mcp__gh__review"


def test_characters_providers_refuse_become_underscores() -> None:
    assert tool_name("my.server", "read file/v2") == "mcp__my_server__read_file_v2"
    assert tool_name("ünï", "x\x1b[2J") == "mcp___n___x__2J"
    assert VALID.match(tool_name("a b", "c:d"))


def test_long_names_are_capped_and_stay_distinct() -> None:
    a = tool_name("server", "t" * 100 + "a")
    b = tool_name("server", "t" * 100 + "b")
    assert len(a) == len(b) == MAX_NAME
    assert a != b and VALID.match(a) and a.startswith("mcp__server__ttt")
