"""The Bash sandbox end to end: the real `peri -p` against the fake model, with bubblewrap for
real (skipped, with bwrap's own words, only where `bwrap --ro-bind / / --unshare-all true`
fails)."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Peri
from tests.e2e.test_tools_e2e import _tool_results

FAKE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKE-KEY-DO-NOT-LEAK\n"


def _probe() -> str | None:
    try:
        done = subprocess.run(
            ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "true"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    return None if done.returncode == 0 else (done.stderr or done.stdout).strip()


_PROBLEM = _probe()
pytestmark = pytest.mark.skipif(_PROBLEM is not None, reason=f"bwrap cannot run: {_PROBLEM}")


def sandboxed(peri: Peri, extra: dict[str, Any] | None = None, **settings: Any) -> Peri:
    """`peri` with the sandbox on in the user's settings, a git workspace and a planted key."""
    home = peri.home
    (home / ".peri").mkdir(exist_ok=True)
    body = {"sandbox": {"enabled": True, **settings}, **(extra or {})}
    (home / ".peri" / "settings.json").write_text(json.dumps(body))
    (home / ".ssh").mkdir(exist_ok=True)
    (home / ".ssh" / "id_rsa").write_text(FAKE_KEY)
    if not (peri.workspace / ".git").exists():
        subprocess.run(["git", "init", "-q", str(peri.workspace)], check=True)
    return peri


def run_calls(peri: Peri, calls: list[dict[str, Any]], *args: str) -> list[str]:
    """Run one reply of Bash calls in a headless run; the texts of their results."""
    peri.server.set_script([{"tool_calls": calls}, {"text": "done"}])
    result = peri.json("-p", "go", *args)
    assert result["result"] == "done", result
    return _tool_results(peri.model_calls()[-1])


def bash(command: str, **more: Any) -> dict[str, Any]:
    return {"name": "Bash", "input": {"command": command, **more}}


def test_escapes_fail_clearly_and_change_nothing(peri: Peri) -> None:
    sandboxed(peri)
    hooks = peri.workspace / ".git" / "hooks"
    config_before = (peri.workspace / ".git" / "config").read_bytes()
    results = run_calls(
        peri,
        [
            bash("echo x > ../outside.txt"),
            bash("touch ~/.bashrc"),
            bash("cat ~/.ssh/id_rsa"),
            bash("echo 'touch /tmp/pwned' | tee .git/hooks/pre-commit"),
            bash("git config core.hooksPath /tmp/evil; echo y | tee -a .git/config"),
            bash("mkdir -p .claude && echo '{}' | tee .claude/settings.json"),
        ],
    )
    outside, bashrc, key, hook, config, claude = results
    assert "write outside the workspace denied by the sandbox" in outside, outside
    assert "denied by the sandbox" in bashrc and ".bashrc" in bashrc, bashrc
    assert "FAKE-KEY" not in key and "read denied by the sandbox" in key, key
    assert "write to a protected path denied by the sandbox" in hook, hook
    assert "write to a protected path denied by the sandbox" in config, config
    assert "denied by the sandbox" in claude, claude
    assert not (peri.workspace.parent / "outside.txt").exists()
    assert not (peri.home / ".bashrc").exists()
    assert not (hooks / "pre-commit").exists()
    assert (peri.workspace / ".git" / "config").read_bytes() == config_before
    assert not (peri.workspace / ".claude").exists()  # not even the mount point is left


def test_nested_repositories_and_submodules_are_guarded_too(peri: Peri) -> None:
    sandboxed(peri)
    lib = peri.workspace / "vendor" / "lib"
    lib.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(lib)], check=True)
    module = peri.workspace / ".git" / "modules" / "sub"
    (module / "hooks").mkdir(parents=True)
    (module / "HEAD").write_text("ref: refs/heads/main\n")
    (module / "config").write_text("[core]\n")
    before = (lib / ".git" / "config").read_bytes()
    hook, config, git_config, module_hook, module_config, inside = run_calls(
        peri,
        [
            bash("echo 'touch /tmp/pwned' | tee vendor/lib/.git/hooks/pre-commit"),
            bash("echo '[core] fsmonitor = evil' | tee -a vendor/lib/.git/config"),
            bash("git -C vendor/lib config core.hooksPath /tmp/evil"),
            bash("echo x | tee .git/modules/sub/hooks/post-checkout"),
            bash("echo y | tee -a .git/modules/sub/config"),
            bash("echo fine > vendor/lib/file.txt && echo done"),
        ],
    )
    for result in (hook, config, module_hook, module_config):
        assert "write to a protected path denied by the sandbox" in result, result
    assert "could not write config file" in git_config, git_config
    assert "denied by the sandbox" in git_config, git_config  # (git renames config.lock onto it)
    assert not (lib / ".git" / "hooks" / "pre-commit").exists()
    assert (lib / ".git" / "config").read_bytes() == before
    assert not (module / "hooks" / "post-checkout").exists()
    assert (module / "config").read_text() == "[core]\n"
    assert "done" in inside and (lib / "file.txt").read_text() == "fine\n"  # the rest is writable


def test_workspace_and_session_temp_are_writable_and_default_mode_asks_nothing(
    peri: Peri,
) -> None:
    sandboxed(peri)
    (result,) = run_calls(
        peri, [bash('echo in > inside.txt && echo t > "$TMPDIR/t" && cat "$TMPDIR/t"')]
    )
    assert (peri.workspace / "inside.txt").read_text() == "in\n"
    assert "t" in result and "Permission denied for Bash" not in result


def test_a_deny_rule_still_denies(peri: Peri) -> None:
    sandboxed(peri, extra={"permissions": {"deny": ["Bash(rm:*)"]}})
    (peri.workspace / "keep.txt").write_text("x")
    (result,) = run_calls(peri, [bash("rm -f keep.txt")])
    assert "denied" in result.lower() and (peri.workspace / "keep.txt").exists()


def test_background_and_detached_children_stay_inside(peri: Peri) -> None:
    sandboxed(peri)
    results = run_calls(
        peri,
        [
            bash("touch ~/bg-escape 2> bg.err; echo $? > bg.rc", run_in_background=True),
            bash(
                "setsid -w bash -c 'touch ~/setsid-escape; echo setsid=$?'; "
                "nohup bash -c 'touch ~/nohup-escape; echo nohup=$?' > nohup.out 2>&1; "
                "cat nohup.out; until [ -s bg.rc ]; do sleep 0.05; done; cat bg.rc"
            ),
        ],
    )
    text = results[1]
    assert "setsid=1" in text and "nohup=1" in text, text
    assert (peri.workspace / "bg.rc").read_text().strip() == "1"
    for name in ("bg-escape", "setsid-escape", "nohup-escape"):
        assert not (peri.home / name).exists()


def test_a_host_unix_socket_under_tmp_is_unreachable(peri: Peri, tmp_path: Path) -> None:
    sandboxed(peri)
    path = tmp_path / "host.sock"
    accepted: list[bool] = []
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    server.settimeout(0.2)

    def serve() -> None:
        for _ in range(100):
            try:
                server.accept()
                accepted.append(True)
                return
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    script = f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({str(path)!r})"
    (result,) = run_calls(peri, [bash(f'python3 -c "{script}" && echo CONNECTED')])
    server.close()
    thread.join(timeout=30)
    assert "CONNECTED" not in result and not accepted, result


def test_leaving_the_sandbox_is_asked_even_in_bypass(peri: Peri) -> None:
    sandboxed(peri)
    (result,) = run_calls(
        peri,
        [bash("touch ~/escaped", dangerouslyDisableSandbox=True)],
        "--permission-mode",
        "bypass",
    )
    assert "OUTSIDE the sandbox" in result and not (peri.home / "escaped").exists(), result


def test_leaving_the_sandbox_is_refused_when_turned_off(peri: Peri) -> None:
    sandboxed(peri, allowUnsandboxedCommands=False)
    (result,) = run_calls(
        peri,
        [bash("touch ~/escaped", dangerouslyDisableSandbox=True)],
        "--permission-mode",
        "bypass",
    )
    assert "allowUnsandboxedCommands" in result and not (peri.home / "escaped").exists()


def test_excluded_commands_run_outside_with_ordinary_approval(peri: Peri) -> None:
    sandboxed(peri, excludedCommands=["touch"])
    (asked,) = run_calls(peri, [bash("touch ~/excluded")])
    assert "Permission denied for Bash" in asked  # headless: an ordinary question, denied
    (ran,) = run_calls(peri, [bash("touch ~/excluded")], "--permission-mode", "bypass")
    assert (peri.home / "excluded").exists(), ran  # outside the sandbox, as configured


def test_grep_searches_inside_the_sandbox(peri: Peri) -> None:
    """Grep's helper process runs under the same sandbox as Bash: a folder outside the workspace
    under /tmp (a fresh tmpfs inside) has nothing to find with the sandbox on, and its file with
    it off. The hidden ~/.ssh is asked about (denied headless) sandbox on or off, `bypass` too."""
    elsewhere = peri.home.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "note.txt").write_text("FAKE-KEY-DO-NOT-LEAK-2\n")
    grep = {
        "name": "Grep",
        "input": {"pattern": "FAKE-KEY", "path": str(elsewhere), "output_mode": "content"},
    }
    key = {
        "name": "Grep",
        "input": {"pattern": "FAKE-KEY", "path": str(peri.home / ".ssh"), "output_mode": "content"},
    }
    sandboxed(peri)
    inside, secret = run_calls(peri, [grep, key], "--permission-mode", "bypass")
    assert "FAKE-KEY-DO-NOT-LEAK" not in inside + secret, (inside, secret)
    assert "hidden path" in secret
    sandboxed(peri, enabled=False)
    outside, secret = run_calls(peri, [grep, key], "--permission-mode", "bypass")
    assert "FAKE-KEY-DO-NOT-LEAK-2" in outside, outside  # the same call finds it unsandboxed
    assert "FAKE-KEY-DO-NOT-LEAK" not in secret and "hidden path" in secret, secret
