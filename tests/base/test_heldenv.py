"""heldenv: the provider variables leave the environment block `/proc` shows and stay in memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from peri_cli.base.heldenv import _wiped, held_env

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")


def test_wiped_blanks_named_entries_and_leaves_the_rest_in_place() -> None:
    block = b"A=1\0ANTHROPIC_API_KEY=sk=x\0ANTHROPIC_API_KEY2=keep\0B=2\0ANTHROPIC_API_KEY=dup\0"
    out = _wiped(block, {b"ANTHROPIC_API_KEY"})
    assert len(out) == len(block)  # libc's pointers into the block stay valid
    assert [e for e in out.split(b"\0") if e] == [b"A=1", b"ANTHROPIC_API_KEY2=keep", b"B=2"]
    assert b"sk=x" not in out and b"dup" not in out
    assert out.index(b"B=2") == block.index(b"B=2")


def test_wiped_without_a_match_is_the_block_itself() -> None:
    block = b"A=1\0B=2\0"
    assert _wiped(block, {b"OPENAI_API_KEY"}) == block


def test_nothing_is_held_unless_peri_itself_started() -> None:
    """Importing Peri (as the SDK does) takes nothing from the host's environment."""
    assert held_env() == {}


PROBE = """
import json, os, subprocess
from peri_cli.base.heldenv import hide_provider_env, held_env
hide_provider_env()
with open("/proc/self/environ", "rb") as f:
    block = f.read()
child = subprocess.run(["env"], capture_output=True, text=True).stdout
print(json.dumps({
    "held": dict(held_env()),
    "in_os_environ": sorted(k for k in os.environ if k.startswith(("ANTHROPIC_", "OPENAI_"))),
    "block_has_secret": b"SECRET" in block or b"pw@" in block,
    "block_has_other": b"KEEP_ME=yes" in block,
    "child_has_secret": "SECRET" in child or "pw@" in child,
}))
"""


@linux
def test_hide_moves_the_variables_into_memory_and_wipes_the_block() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))} | {
        "ANTHROPIC_API_KEY": "sk-SECRET-1",
        "OPENAI_BASE_URL": "http://u:pw@host/v1",
        "KEEP_ME": "yes",
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    seen = json.loads(done.stdout)
    assert seen["held"] == {
        "ANTHROPIC_API_KEY": "sk-SECRET-1",
        "OPENAI_BASE_URL": "http://u:pw@host/v1",
    }
    assert seen["in_os_environ"] == []
    assert not seen["block_has_secret"] and seen["block_has_other"]
    assert not seen["child_has_secret"]  # a child started without `env=` inherits none


@linux
def test_peri_is_not_dumpable_after_start() -> None:
    code = (
        "from peri_cli.base.heldenv import hide_provider_env; import ctypes\n"
        "hide_provider_env()\n"
        "print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))\n"  # PR_GET_DUMPABLE
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0"
