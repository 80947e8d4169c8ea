"""The sandbox switched on where it cannot run: the real `peri -p`, with a `bwrap` first on PATH
that fails the way bubblewrap does on a kernel with user namespaces off. Peri says so once with
what to do, commands go through the ordinary approvals, and `failIfUnavailable` refuses to start.
(Runs everywhere: nothing here needs a working bubblewrap.)"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Peri
from tests.e2e.test_tools_e2e import _tool_results

BWRAP_SAYS = (
    "bwrap: No permissions to create a new namespace, likely because the kernel does not allow "
    "non-privileged user namespaces."
)


def without_namespaces(peri: Peri, **sandbox: Any) -> Path:
    """The sandbox on in the user's settings, and a bwrap that cannot create a namespace."""
    bin_dir = peri.home / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "bwrap"
    fake.write_text(f"#!/bin/sh\necho '{BWRAP_SAYS}' >&2\nexit 1\n")
    fake.chmod(0o755)
    peri.extra_env["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    (peri.home / ".peri").mkdir(exist_ok=True)
    settings = {"sandbox": {"enabled": True, **sandbox}}
    (peri.home / ".peri" / "settings.json").write_text(json.dumps(settings))
    return peri.workspace / "made.txt"


def test_unavailable_says_why_once_and_commands_ask_as_usual(peri: Peri) -> None:
    made = without_namespaces(peri)
    command = {"name": "Bash", "input": {"command": "echo hi > made.txt"}}
    peri.server.set_script([{"tool_calls": [command, command]}, {"text": "done"}])
    done = peri.run("-p", "go", "--output-format", "json")
    result = json.loads(done.stdout)
    assert result["result"] == "done", done.stderr
    # Said once (two commands, one warning), with bwrap's own words and the way out.
    assert done.stderr.count("sandbox unavailable") == 1, done.stderr
    assert "No permissions to create a new namespace" in done.stderr
    assert "unprivileged_userns_clone" in done.stderr
    # Not sandboxed, so not auto-allowed: headless default mode denies an unapproved Bash call,
    # and the model reads the denial; nothing ran.
    results = _tool_results(peri.model_calls()[-1])
    assert len(results) == 2 and all("denied" in r.lower() for r in results), results
    assert not made.exists()


def test_unavailable_with_an_allow_rule_runs_unsandboxed(peri: Peri) -> None:
    """The ordinary approvals, not a refusal: an allow rule lets the command run (outside)."""
    without_namespaces(peri)
    (peri.home / ".peri" / "settings.json").write_text(
        json.dumps({"sandbox": {"enabled": True}, "permissions": {"allow": ["Bash(echo:*)"]}})
    )
    command = {"name": "Bash", "input": {"command": "echo ran-outside"}}
    peri.server.set_script([{"tool_calls": [command]}, {"text": "ok"}])
    result = peri.json("-p", "go")
    assert result["result"] == "ok"
    (output,) = _tool_results(peri.model_calls()[-1])
    assert output.strip() == "ran-outside", output


def test_fail_if_unavailable_refuses_to_start(peri: Peri) -> None:
    without_namespaces(peri, failIfUnavailable=True)
    peri.server.set_script([{"text": "never"}])
    done = peri.run("-p", "go")
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr  # one line, no traceback
    assert "sandbox.failIfUnavailable" in lines[0] and "No permissions" in lines[0]
    assert peri.model_calls() == []  # nothing was asked of the model
