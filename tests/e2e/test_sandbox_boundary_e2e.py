"""Attacks on the sandbox's boundary (issue 37), each through the real `peri -p` with the sandbox
on against the fake model, as root (how CI runs) and, where the outcome could differ, as an
unprivileged user. Skipped, with bwrap's own words, only where the probe fails."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Peri
from tests.e2e.test_sandbox_e2e import _PROBLEM, bash, run_calls, sandboxed

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
