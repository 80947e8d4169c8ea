"""Attacks on the sandbox's boundary (issue 37), each through the real `peri -p` with the sandbox
on against the fake model, as root (how CI runs) and, where the outcome could differ, as an
unprivileged user. Skipped, with bwrap's own words, only where the probe fails."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Peri
from tests.e2e.test_sandbox_e2e import _PROBLEM, bash, run_calls, sandboxed
from tests.e2e.test_tools_e2e import _tool_results

pytestmark = pytest.mark.skipif(_PROBLEM is not None, reason=f"bwrap cannot run: {_PROBLEM}")


def test_kernel_settings_are_read_only_inside_even_as_root(peri: Peri) -> None:
    """bubblewrap 0.8 leaves /proc/sys writable to uid 0 (its access(W_OK) test fails on the
    folder); a sysctl such as kernel.core_pattern would then run a program as root on the host.
    The command writes back the value already there, so a failure of the fix changes nothing."""
    sandboxed(peri)
    sysctl, sys_file, trigger = run_calls(
        peri,
        [
            bash(
                "v=$(cat /proc/sys/kernel/domainname); "
                'printf "%s\\n" "$v" > /proc/sys/kernel/domainname && echo WROTE-SYSCTL; '
                "grep -E ' /proc/sys ' /proc/self/mountinfo"
            ),
            bash(
                "v=$(cat /sys/kernel/uevent_helper); "
                'printf "%s\\n" "$v" > /sys/kernel/uevent_helper && echo WROTE-SYS'
            ),
            bash(
                "if [ -e /proc/sysrq-trigger ]; then : >> /proc/sysrq-trigger && echo WROTE-SYSRQ;"
                " else echo no-trigger; fi; grep -c ' /proc/sysrq-trigger ' /proc/self/mountinfo"
            ),
        ],
    )
    assert "WROTE-SYSCTL" not in sysctl and " ro," in sysctl, sysctl  # a read-only mount
    assert "WROTE-SYS" not in sys_file and "Read-only file system" in sys_file, sys_file
    assert "WROTE-SYSRQ" not in trigger, trigger


# --- item 2: what a sandboxed command may leave in a protected path ----------------------------

SERVER = '{"mcpServers": {"planted": {"command": "touch", "args": ["/tmp/peri-planted-server"]}}}'


@dataclass
class Run:
    results: list[str]  # the tool results' texts, in order
    session: str  # its id: where what was moved aside is kept
    stderr: str  # what the user was told


def run_one(peri: Peri, calls: list[dict[str, Any]], *args: str) -> Run:
    """Like `run_calls`, with the session's id and what the user saw on stderr."""
    peri.server.set_script([{"tool_calls": calls}, {"text": "done"}])
    done = peri.run("-p", "go", *args, "--output-format", "json")
    result = json.loads(done.stdout)
    assert result["result"] == "done", (result, done.stderr)
    return Run(_tool_results(peri.model_calls()[-1]), str(result["session_id"]), done.stderr)


def refused(peri: Peri, session: str) -> Path:
    return peri.home / ".peri" / "refused" / session


def test_a_protected_write_peri_sees_asks_with_the_sandbox_on_too(peri: Peri) -> None:
    """Auto-allow never answers a question Peri would ask without the sandbox: a redirection
    into a protected path asks (headless: denied), in default and accept-edits mode."""
    sandboxed(peri)
    (peri.workspace / "sub").mkdir()
    for mode in ("default", "accept-edits"):
        results = run_calls(
            peri,
            [
                bash(f"echo '{SERVER}' > .mcp.json"),
                bash("mkdir -p sub/.claude; echo '{}' > sub/.claude/settings.json"),
            ],
            "--permission-mode",
            mode,
        )
        for result in results:
            assert "protected path" in result and "denied" in result.lower(), result
        assert not (peri.workspace / ".mcp.json").exists()
        assert not (peri.workspace / "sub" / ".claude").exists()
