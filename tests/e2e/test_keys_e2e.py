"""Issue 23, "Keys outside the sandbox too": a command the model runs cannot read the provider key
from Peri's own process (`/proc/<peri>/environ`, `/proc/<peri>/mem`), root included, while the
provider still receives it. Real `peri -p` against the fake server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.e2e.conftest import API_KEY, Peri

# Peri, found from a command as its nearest ancestor running `-m peri_cli` (the command's
# parent is its keeper, the reaper's process; other tests' Peri processes are not this one's).
FIND_PERI = (
    'peri=$PPID; while [ "$peri" -gt 1 ] && '
    "! tr '\\0' ' ' < /proc/$peri/cmdline | grep -q -e '-m peri_cli'; do "
    "peri=$(ps -o ppid= -p $peri | tr -d ' '); done; "
)
# The Bash call: Peri's environment as a command sees it, Peri found through `ps`, and its
# parent's (the keeper).
READ_ENVIRON = FIND_PERI + (
    "echo PARENT=$(tr '\\0' ' ' < /proc/$peri/cmdline); "
    "cat /proc/$peri/environ | tr '\\0' '\\n'; echo ---; "
    "echo KEEPER=$(tr '\\0' ' ' < /proc/$PPID/cmdline); "
    "tr '\\0' '\\n' < /proc/$PPID/environ; echo END"
)


def _bash(peri: Peri, command: str, *, prefix: tuple[str, ...] = ()) -> str:
    """Run one Bash call in bypass mode (`prefix`: what starts Peri); the tool result as the
    model received it."""
    peri.server.set_script(
        [{"tool_calls": [{"name": "Bash", "input": {"command": command}}]}, {"text": "seen"}]
    )
    argv = [sys.executable, "-m", "peri_cli", "-p", "look", "--permission-mode", "bypass"]
    done = subprocess.run(
        [*prefix, *argv, "--output-format", "json"],
        cwd=peri.workspace,
        env=peri.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    calls = peri.model_calls()
    assert len(calls) == 2
    # the tool's answer (anthropic: a `tool_result` block; openai: a `tool` message), without
    # the call that asked for it
    (answer,) = [
        m
        for m in calls[1]["messages"]
        if m["role"] == "tool" or "tool_result" in json.dumps(m.get("content"))
    ]
    return json.dumps(answer)


def _sent_key(peri: Peri) -> list[str]:
    headers = [r["headers"] for r in peri.server.requests]
    return [
        h.get("x-api-key") or h.get("authorization", "").removeprefix("Bearer ") for h in headers
    ]


def test_a_child_reads_no_key_from_peris_environ(peri: Peri, provider: str) -> None:
    peri.provider = provider
    seen = _bash(peri, READ_ENVIRON)
    assert "PARENT=" in seen and "-m peri_cli" in seen and "KEEPER=" in seen
    assert "END" in seen
    if os.geteuid() == 0:  # root reads the file despite PR_SET_DUMPABLE: the block itself is clean
        assert "PERI_HOME=" in seen
    assert API_KEY not in seen
    assert "ANTHROPIC_" not in seen and "OPENAI_" not in seen  # base URLs can hold a password
    assert _sent_key(peri) == [API_KEY, API_KEY]  # the provider still got the key
    (transcript,) = peri.sessions_dir.glob("*.jsonl")
    assert API_KEY not in transcript.read_text()


def test_peris_memory_is_closed_to_its_own_users_children(peri: Peri) -> None:
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:
        if not shutil.which("capsh"):
            pytest.skip("as root, capsh is needed to start Peri as an ordinary user's Peri")
        # Root's children may read it whatever Peri does (CAP_SYS_PTRACE); started without that
        # capability, Peri and its children are what any user's Peri and commands are.
        prefix = ("capsh", "--drop=cap_sys_ptrace", "--", "-c", 'exec "$@"', "peri")
    probe = FIND_PERI + (
        "grep CapEff /proc/self/status; "
        "(exec 3< /proc/$peri/mem) && echo MEM-OPEN || echo MEM-DENIED; "
        "(exec 3< /proc/$PPID/mem) && echo KEEPER-OPEN || echo KEEPER-DENIED; "
        'echo "ENV=$(tr -d "\\0" < /proc/$peri/environ | wc -c)"'
    )
    seen = _bash(peri, probe, prefix=prefix)
    assert "MEM-DENIED" in seen and "MEM-OPEN" not in seen
    assert "KEEPER-DENIED" in seen and "KEEPER-OPEN" not in seen
    # (environ: closed to another user's process; root reads it, so the block is wiped)
    assert API_KEY not in seen


def test_version_and_print_without_any_key(peri: Peri) -> None:
    env = {k: v for k, v in peri.env().items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    done = subprocess.run(
        [sys.executable, "-m", "peri_cli", "--version"],
        cwd=peri.workspace,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.startswith("peri ")
    done = subprocess.run(
        [sys.executable, "-m", "peri_cli", "-p", "hi"],
        cwd=peri.workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1 and "ANTHROPIC_API_KEY" in done.stderr  # the usual advice


def test_a_base_url_alone_still_reaches_the_server(peri: Peri) -> None:
    """A local OpenAI-compatible server without a key: the held base URL is the one used."""
    peri.provider = "openai"
    peri.extra_env = {"OPENAI_API_KEY": ""}
    peri.server.set_script([{"text": "local"}])
    result = peri.json("-p", "hi")
    assert not result["is_error"] and result["result"] == "local"


def test_the_sdk_leaves_its_host_environment_alone(peri: Peri) -> None:
    """A program using `peri_cli.sdk` keeps its own environment: only `peri` itself hides keys."""
    script = (
        "import os, asyncio\n"
        "from peri_cli.sdk import query, PeriOptions\n"
        "async def run():\n"
        "    async for e in query('hi', options=PeriOptions(cwd=os.getcwd())):\n"
        "        pass\n"
        "asyncio.run(run())\n"
        "print(os.environ.get('ANTHROPIC_API_KEY'))\n"
    )
    peri.server.set_script([{"text": "ok"}])
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=peri.workspace,
        env=peri.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == API_KEY
    assert _sent_key(peri) == [API_KEY]
