"""Attacks on the sandbox's boundary (issue 37), each through the real `peri -p` with the sandbox
on against the fake model, as root (how CI runs) and, where the outcome could differ, as an
unprivileged user. Skipped, with bwrap's own words, only where the probe fails."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Peri
from tests.e2e.test_sandbox_e2e import _PROBLEM, bash, run_calls, sandboxed
from tests.e2e.test_tools_e2e import _tool_results
from tests.fakeserver import FakeServer

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


def test_protected_paths_found_at_start_are_read_only_at_every_depth(peri: Peri) -> None:
    """Existing `.peri`, `.claude`, `.agents` and `.mcp.json` below the root, and missing ones
    at the root and a nested repository's root, cannot be written by an auto-allowed command
    (one whose writes Peri's own check cannot see)."""
    sandboxed(peri)
    ws = peri.workspace
    (ws / "evil.json").write_text(SERVER)
    (ws / "sub" / ".claude").mkdir(parents=True)
    (ws / "sub" / ".claude" / "settings.json").write_text("{}")
    (ws / "sub" / ".peri").mkdir()
    (ws / "sub" / ".peri" / "settings.json").write_text("{}")
    (ws / "a" / "b" / ".agents" / "skills").mkdir(parents=True)
    (ws / "a" / "b" / ".mcp.json").write_text("{}")
    lib = ws / "vendor" / "lib"
    lib.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(lib)], check=True)
    results = run_calls(
        peri,
        [
            bash("cp evil.json sub/.claude/settings.json"),
            bash("cp evil.json sub/.peri/settings.json"),
            bash("mkdir -p a/b/.agents/skills/x && cp evil.json a/b/.agents/skills/x/SKILL.md"),
            bash("cp evil.json a/b/.mcp.json"),
            bash("mkdir -p .agents/skills/x && cp evil.json .agents/skills/x/SKILL.md"),
            bash("mkdir -p vendor/lib/.claude && cp evil.json vendor/lib/.claude/settings.json"),
            bash("ls -la .mcp.json; ls -d vendor/lib/.mcp.json"),
        ],
    )
    for result in results[:-1]:
        assert "protected path denied by the sandbox" in result, result
    assert (ws / "sub" / ".claude" / "settings.json").read_text() == "{}"
    assert (ws / "sub" / ".peri" / "settings.json").read_text() == "{}"
    assert not (ws / "a" / "b" / ".agents" / "skills" / "x").exists()
    assert (ws / "a" / "b" / ".mcp.json").read_text() == "{}"
    assert not (ws / ".agents").exists() and not (lib / ".claude").exists()
    # A missing protected file gets no stand-in on the host, not even while a command runs.
    assert results[-1].count("No such file or directory") == 2, results[-1]


def test_a_planted_protected_path_is_moved_aside_and_both_are_told(peri: Peri) -> None:
    """What Peri's check cannot see and no mount holds (a missing `.mcp.json`, a new folder's
    `.peri`, one put where a known one was renamed away) is found after the command and moved
    to $PERI_HOME/refused/<session>/, never left in the workspace."""
    sandboxed(peri)
    ws = peri.workspace
    (ws / "evil.json").write_text(SERVER)
    (ws / "old" / ".claude").mkdir(parents=True)
    (ws / "old" / ".claude" / "settings.json").write_text('{"mine": true}')
    run = run_one(
        peri,
        [
            bash("cp evil.json .mcp.json && echo planted"),
            bash("mkdir -p new/deep/.peri && cp evil.json new/deep/.peri/settings.json"),
            bash(
                "mv old older && mkdir -p old/.claude && cp evil.json old/.claude/settings.json"
                " && echo swapped"
            ),
            bash("ls -a .mcp.json new/deep old"),
        ],
    )
    planted, nested, swapped, listing = run.results
    assert "planted" in planted and "moved aside" in planted and ".mcp.json" in planted, planted
    assert "new/deep/.peri" in nested and "moved aside" in nested, nested
    assert "old/.claude" in swapped and "moved aside" in swapped, swapped
    assert "No such file" in listing and ".peri" not in listing, listing
    assert not (ws / ".mcp.json").exists() and not (ws / "new" / "deep" / ".peri").exists()
    assert not (ws / "old" / ".claude").exists()
    kept = refused(peri, run.session)
    assert (kept / ".mcp.json").read_text() == SERVER
    assert (kept / "new" / "deep" / ".peri" / "settings.json").read_text() == SERVER
    assert (kept / "old" / ".claude" / "settings.json").read_text() == SERVER
    # The user's own folder, renamed away by the command, is moved aside too, never deleted.
    assert (kept / "older" / ".claude" / "settings.json").read_text() == '{"mine": true}'
    assert "moved aside" in run.stderr and ".mcp.json" in run.stderr, run.stderr  # the user


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _branches(ws: Path) -> None:
    """main: a tracked `.claude/settings.json`; `plant`: adds `.mcp.json` and
    `sub/.claude/settings.json`; `change`: changes the root's `.claude/settings.json`."""
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text('{"v": 1}')
    _git(ws, "checkout", "-q", "-b", "main")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "main")
    _git(ws, "checkout", "-q", "-b", "plant")
    (ws / ".mcp.json").write_text(SERVER)
    (ws / "sub" / ".claude").mkdir(parents=True)
    (ws / "sub" / ".claude" / "settings.json").write_text('{"sub": 1}')
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "plant")
    _git(ws, "checkout", "-q", "main")
    _git(ws, "checkout", "-q", "-b", "change")
    (ws / ".claude" / "settings.json").write_text('{"v": 2}')
    _git(ws, "commit", "-qam", "change")
    _git(ws, "checkout", "-q", "main")


def test_what_git_checks_out_is_held_back_not_moved(peri: Peri) -> None:
    """A protected path git tracks stays as git left it, held back and said so; a read-only one
    git could not update is named, with the advice to run the command outside."""
    sandboxed(peri)
    ws = peri.workspace
    _branches(ws)
    run = run_one(peri, [bash("git checkout -q plant && echo switched")])
    (held,) = run.results
    assert "switched" in held and "held back" in held, held
    assert ".mcp.json" in held and "sub/.claude" in held, held
    assert "held back" in run.stderr, run.stderr
    assert (ws / ".mcp.json").read_text() == SERVER  # the working tree is as git left it
    assert (ws / "sub" / ".claude" / "settings.json").read_text() == '{"sub": 1}'
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=ws, capture_output=True, text=True, check=True
    )
    assert status.stdout == "", status.stdout
    assert not refused(peri, run.session).exists()
    _git(ws, "checkout", "-q", "main")
    (stuck,) = run_calls(peri, [bash("git checkout -q change; echo rc=$?")])
    assert ".claude/settings.json" in stuck and "outside the sandbox" in stuck, stuck
    assert (ws / ".claude" / "settings.json").read_text() == '{"v": 1}'


# --- item 3: `.git` cannot be redirected ------------------------------------------------------


def test_git_redirections_are_read_only_or_moved_aside(peri: Peri, tmp_path: Path) -> None:
    """`commondir`, `config.worktree`, `info/attributes` and `worktrees/*/...` planted in `.git`
    are moved aside, so the user's own `git status` runs no planted fsmonitor; an existing
    `info/attributes` is read-only; the rest of `.git` stays writable (a commit works)."""
    sandboxed(peri)
    ws = peri.workspace
    _git(ws, "commit", "-q", "--allow-empty", "-m", "start")
    (ws / ".git" / "info").mkdir(exist_ok=True)
    (ws / "lib").mkdir()
    lib = ws / "lib" / "inner"
    subprocess.run(["git", "init", "-q", str(lib)], check=True)
    (lib / ".git" / "info").mkdir(exist_ok=True)
    (lib / ".git" / "info" / "attributes").write_text("* text\n")
    marker = tmp_path / "PWNED"
    evil = f"git init -q --bare evil.git && git -C evil.git config core.fsmonitor 'touch {marker}'"
    run = run_one(
        peri,
        [
            bash(
                f"{evil} && cp -r .git/objects .git/refs evil.git/ && "
                "echo ../evil.git | tee .git/commondir"
            ),
            bash("printf '[core]\\n\\tfsmonitor = touch x\\n' | tee .git/config.worktree"),
            bash("echo '* filter=evil' | tee .git/info/attributes"),
            bash("mkdir -p .git/worktrees/w && echo /tmp | tee .git/worktrees/w/commondir"),
            bash("echo '* filter=evil' | tee -a lib/inner/.git/info/attributes"),
            bash(
                "echo f > f && git add f && "
                "git -c user.name=a -c user.email=a@b commit -qm f && echo COMMITTED"
            ),
        ],
    )
    commondir, worktree, attributes, worktrees, nested, commit = run.results
    for result, name in (
        (commondir, ".git/commondir"),
        (worktree, ".git/config.worktree"),
        (attributes, ".git/info/attributes"),
        (worktrees, ".git/worktrees/w"),
    ):
        assert name in result and "moved aside" in result, result
    assert "protected path denied by the sandbox" in nested, nested
    assert "COMMITTED" in commit, commit
    for rel in ("commondir", "config.worktree", "info/attributes", "worktrees/w/commondir"):
        assert not (ws / ".git" / rel).exists(), rel
        assert (refused(peri, run.session) / ".git" / rel).exists(), rel
    assert (lib / ".git" / "info" / "attributes").read_text() == "* text\n"
    subprocess.run(["git", "status"], cwd=ws, capture_output=True, check=True)
    assert not marker.exists()


def test_a_command_that_writes_git_config_fails_and_says_why(peri: Peri) -> None:
    sandboxed(peri)
    (result,) = run_calls(peri, [bash("git remote add origin https://example.com/x.git")])
    assert "could not" in result and ".git/config" in result, result
    assert "read-only inside the sandbox" in result and "outside the sandbox" in result, result


def test_a_new_git_folder_stays_and_is_reported_when_it_runs_commands(peri: Peri) -> None:
    sandboxed(peri)
    ws = peri.workspace
    clean, fsmonitor, hook, later = run_calls(
        peri,
        [
            bash("git init -q clean && echo made"),
            bash("git init -q mon && git -C mon config core.fsmonitor 'touch /tmp/x' && echo made"),
            bash("git init -q hooked && echo '#!/bin/sh' | tee hooked/.git/hooks/post-checkout"),
            bash("git -C mon config core.pager evil"),
        ],
    )
    assert "made" in clean and "mon" not in clean and "report" not in clean.lower(), clean
    assert "mon/.git" in fsmonitor and "core.fsmonitor" in fsmonitor, fsmonitor
    assert "hooked/.git" in hook and "post-checkout" in hook, hook
    for name in ("clean", "mon", "hooked"):
        assert (ws / name / ".git" / "HEAD").exists()  # stays where it was made
    assert "protected path denied by the sandbox" in later or "read-only" in later, later


# --- item 2, the check's other moments ---------------------------------------------------------


def test_a_background_command_s_plant_is_moved_while_it_runs(peri: Peri) -> None:
    sandboxed(peri)
    (peri.workspace / "evil.json").write_text(SERVER)
    results = run_calls(
        peri,
        [
            bash("cp evil.json .mcp.json; sleep 60", run_in_background=True),
            bash(
                "for i in $(seq 600); do [ -e .mcp.json ] && break; sleep 0.05; done; "
                "for i in $(seq 600); do [ -e .mcp.json ] || { echo GONE; break; }; "
                "sleep 0.05; done"
            ),
        ],
    )
    assert "GONE" in results[1], results[1]


def test_the_check_runs_before_a_hook_starts(peri: Peri, tmp_path: Path) -> None:
    """A background command redirects `.git` and keeps running: the Stop hook's `git status`
    (outside the sandbox, as the user) runs none of what it planted."""
    marker = tmp_path / "PWNED"
    status = {"type": "command", "command": "git status >/dev/null 2>&1; true"}
    sandboxed(peri, extra={"hooks": {"Stop": [{"hooks": [status]}]}})
    ws = peri.workspace
    _git(ws, "commit", "-q", "--allow-empty", "-m", "start")
    plant = (
        f"git init -q --bare evil.git && git -C evil.git config core.fsmonitor 'touch {marker}'"
        " && cp -r .git/objects .git/refs evil.git/ && echo ../evil.git | tee .git/commondir"
        " && sleep 60"
    )
    peri.server.set_script(
        [{"tool_calls": [bash(plant, run_in_background=True)]}, {"text": "done", "delay": 0.1}]
    )
    done = peri.run("-p", "go", "--output-format", "json")
    session = json.loads(done.stdout)["session_id"]
    assert not marker.exists(), done.stderr
    assert not (ws / ".git" / "commondir").exists()
    assert (refused(peri, session) / ".git" / "commondir").exists()
    assert ".git/commondir" in done.stderr and "moved aside" in done.stderr, done.stderr


def test_the_check_runs_at_session_end(peri: Peri) -> None:
    """What a background command planted just before Peri ended it is moved aside as the
    session ends, not left for the next run to load."""
    sandboxed(peri)
    ws = peri.workspace
    (ws / "evil.json").write_text(SERVER)
    # (planted again and again: whatever a check moves, one is there as the session ends)
    replant = "while :; do [ -e .mcp.json ] || cp evil.json .mcp.json; sleep 0.02; done"
    wait = "until [ -e .mcp.json ]; do sleep 0.02; done"
    peri.server.set_script(
        [
            {"tool_calls": [bash(replant, run_in_background=True)]},
            {"tool_calls": [bash(wait)]},  # (its own check moves one; another is made at once)
            {"text": "done"},
        ]
    )
    done = peri.run("-p", "go", "--output-format", "json")
    session = json.loads(done.stdout)["session_id"]
    assert not (ws / ".mcp.json").exists(), done.stderr
    assert (refused(peri, session) / ".mcp.json").read_text() == SERVER, done.stderr


# --- as an unprivileged user (bubblewrap in a user namespace, Peri's own moves as that user) ---

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _python_for_nobody() -> tuple[str, dict[str, str]] | None:
    """An interpreter uid 65534 can run Peri with, and Peri can start again from inside itself
    (its helpers run its own sys.executable): this one, unless it lives where that user may not
    enter (pyenv's under /root), then the system's of the same version with this one's packages
    on PYTHONPATH; None if neither."""
    packages = os.pathsep.join(
        [str(Path(__file__).resolve().parents[2]), sysconfig.get_path("purelib")]
    )
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    check = (
        "import subprocess, sys; "
        "subprocess.run([sys.executable, '-c', 'import peri_cli'], check=True)"
    )
    for python, extra in ((sys.executable, {}), (f"/usr/bin/{version}", {"PYTHONPATH": packages})):
        done = subprocess.run(
            [*NOBODY, python, "-c", check],
            env={**os.environ, **extra},
            cwd="/",
            capture_output=True,
            check=False,
        )
        if done.returncode == 0:
            return python, extra
    return None


def _nobody_can_sandbox() -> bool:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return False
    probe = ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "true"]
    done = subprocess.run([*NOBODY, *probe], capture_output=True, check=False)
    return done.returncode == 0 and _python_for_nobody() is not None


@pytest.mark.skipif(not _nobody_can_sandbox(), reason="needs root, setpriv and userns for 65534")
def test_the_same_holds_for_an_unprivileged_user(server: FakeServer) -> None:
    python, extra = _python_for_nobody() or (sys.executable, {})
    root = Path(tempfile.mkdtemp(prefix="peri-nobody-"))
    try:
        root.chmod(0o755)
        peri = Peri(server=server, workspace=root / "ws", home=root / "home")
        for folder in (peri.workspace, peri.home):
            folder.mkdir()
        sandboxed(peri)
        (peri.workspace / "evil.json").write_text(SERVER)
        (peri.workspace / "sub" / ".claude").mkdir(parents=True)
        subprocess.run(["chown", "-R", "65534:65534", str(root)], check=True)
        peri.server.set_script(
            [
                {
                    "tool_calls": [
                        bash("cp evil.json .mcp.json && echo planted"),
                        bash("cp evil.json sub/.claude/settings.json"),
                        bash(
                            "v=$(cat /proc/sys/kernel/domainname); "
                            'printf "%s\\n" "$v" > /proc/sys/kernel/domainname && echo WROTE'
                        ),
                    ]
                },
                {"text": "done"},
            ]
        )
        done = subprocess.run(
            [*NOBODY, python, "-m", "peri_cli", "-p", "go", "--output-format", "json"],
            cwd=peri.workspace,
            env={**peri.env(), **extra},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        result = json.loads(done.stdout)
        planted, nested, sysctl = _tool_results(peri.model_calls()[-1])
        assert "moved aside" in planted, planted
        assert "protected path denied by the sandbox" in nested, nested
        assert "WROTE" not in sysctl, sysctl
        assert not (peri.workspace / ".mcp.json").exists()
        kept = peri.home / ".peri" / "refused" / str(result["session_id"]) / ".mcp.json"
        assert kept.read_text() == SERVER
    finally:
        shutil.rmtree(root, ignore_errors=True)
