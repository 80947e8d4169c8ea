# ruff: noqa: E501 - a corpus of shell lines reads best one attempt per line
"""A corpus of escape attempts, each run for real under bubblewrap with the default policy; each
one must be held. Skipped, with bwrap's own words, only where the probe fails."""

from __future__ import annotations

import os
import pty
import select
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from peri_cli.base.settings_sandbox import SandboxSettings
from peri_cli.permissions.sandbox_policy import SandboxPlaces, build_policy
from peri_cli.sandbox.probe import probe
from peri_cli.sandbox.runner import BwrapSandbox

_FOUND = probe()
pytestmark = pytest.mark.skipif(not _FOUND.available, reason=_FOUND.why_not)
SECRET = "HOST-SECRET-7f3a"


@dataclass
class Box:
    root: Path
    ws: Path
    home: Path
    peri_home: Path
    out: Path  # a folder outside every writable root
    sandbox: BwrapSandbox
    sock: Path

    def run(self, command: str, *, timeout: float = 30) -> str:
        env = {"PATH": os.environ["PATH"], "HOME": str(self.home), "OUT": str(self.out)}
        env["PERI_HOME"] = str(self.peri_home)
        wrapped = self.sandbox.wrap(["bash", "-c", command], env, self.ws)
        try:
            done = subprocess.run(
                wrapped.argv,
                env=wrapped.env,
                cwd=self.ws,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                start_new_session=True,
            )
        finally:
            wrapped.finish()
        return done.stdout + done.stderr

    def unchanged(self) -> bool:
        """Nothing outside the writable roots changed."""
        return (
            sorted(p.name for p in self.out.iterdir()) == ["secret.txt"]
            and (self.out / "secret.txt").read_text() == SECRET
            and not (self.home / ".bashrc").exists()
            and (self.peri_home / "settings.json").read_text() == "{}"
            and sorted(p.name for p in (self.ws / ".git" / "hooks").iterdir()) == ["README"]
            and "hooksPath" not in (self.ws / ".git" / "config").read_text()
            and "fsmonitor" not in (self.ws / ".git" / "config").read_text()
            and not (self.ws / ".claude").exists()
            and not (self.ws / ".peri").exists()
        )


@pytest.fixture
def box(tmp_path: Path) -> Iterator[Box]:
    ws, home, out = tmp_path / "ws", tmp_path / "home", tmp_path / "outside"
    for d in (ws, home / ".ssh", home / ".peri", out, tmp_path / "t"):
        d.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    for sample in (ws / ".git" / "hooks").iterdir():
        sample.unlink()
    (ws / ".git" / "hooks" / "README").write_text("hooks")
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    (home / ".peri" / "settings.json").write_text("{}")
    (home / ".peri" / "trusted-workspaces.json").write_text(SECRET)
    (out / "secret.txt").write_text(SECRET)
    places = SandboxPlaces(ws, home, home / ".peri", tmp_path / "t", {})
    policy = build_policy(SandboxSettings(enabled=True), places, [], trusted=True)
    sandbox = BwrapSandbox(policy, lambda _: False)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "host.sock"))
    server.listen(5)
    server.setblocking(False)
    yield Box(tmp_path, ws, home, home / ".peri", out, sandbox, tmp_path / "host.sock")
    try:
        conn, _ = server.accept()
        conn.close()
        connected = True
    except BlockingIOError:
        connected = False
    server.close()
    sandbox.close()
    assert not connected, "a sandboxed command reached the host's Unix socket"


def no_secret(out: str, box: Box) -> bool:
    return SECRET not in out


def says(word: str) -> Callable[[str, Box], bool]:
    return lambda out, box: word not in out


# (name, command, held(output, box)); `box.unchanged()` is checked for every attempt too.
ATTEMPTS: list[tuple[str, str, Callable[[str, Box], bool]]] = [
    ("dotdot", "echo x > ../outside/dots; echo x > ../../x", no_secret),
    ("absolute", 'echo x > "$OUT/abs"', no_secret),
    ("symlink-out", 'ln -s "$OUT/link-target" l && echo x > l', no_secret),
    ("symlink-home", "ln -s ~/.bashrc b && echo x >> b", no_secret),
    ("symlink-key", "ln -s ~/.ssh/id_rsa k; cat k", no_secret),
    (
        "proc-self-root",
        'echo x > "/proc/self/root$OUT/p"; cat /proc/self/root$HOME/.ssh/id_rsa',
        no_secret,
    ),
    ("proc-1-root", 'echo x > "/proc/1/root$OUT/p"; cat /proc/1/root$HOME/.ssh/id_rsa', no_secret),
    ("proc-1-cwd", 'echo x > "/proc/1/cwd/../outside/q"', no_secret),
    ("hardlink-outside", 'ln "$OUT/secret.txt" hl && echo pwn > hl', no_secret),
    ("hardlink-key", "ln ~/.ssh/id_rsa hk; cat hk", no_secret),
    ("read-key", "cat ~/.ssh/id_rsa; ls -la ~/.ssh", no_secret),
    ("find-key", "find / -name id_rsa -exec cat {} + 2>/dev/null", no_secret),
    ("trust-store", 'cat "$PERI_HOME/trusted-workspaces.json"', no_secret),
    (
        "peri-settings",
        'echo \'{"permission_mode":"bypass"}\' > "$PERI_HOME/settings.json"',
        no_secret,
    ),
    ("bashrc", "touch ~/.bashrc; cp /etc/hostname ~/.bashrc", no_secret),
    (
        "git-hook",
        "echo 'touch /tmp/pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
        no_secret,
    ),
    ("git-hooks-path", "git config core.hooksPath /tmp/evil", no_secret),
    ("git-fsmonitor", "git config core.fsmonitor 'touch /tmp/pwned'", no_secret),
    ("git-config-append", "printf '[core]\\n\\thooksPath = x\\n' >> .git/config", no_secret),
    (
        "git-hooks-rename",
        "mv .git/hooks .git/h2; mkdir .git/hooks; echo x > .git/hooks/pre-commit",
        no_secret,
    ),
    (
        "git-dir-rename",
        "mv .git .git-old && mkdir -p .git/hooks && echo x > .git/hooks/post-checkout",
        no_secret,
    ),
    ("git-hooks-rm", "rm -rf .git/hooks; ls .git/hooks", no_secret),
    ("claude-settings", "mkdir -p .claude && echo '{}' > .claude/settings.json", no_secret),
    ("peri-settings-local", "mkdir -p .peri && echo '{}' > .peri/settings.local.json", no_secret),
    ("ld-preload-file", "echo /x.so > /etc/ld.so.preload", no_secret),
    ("ld-preload-env", "LD_PRELOAD=/nonexistent.so bash -c 'echo x > ../outside/ld'", no_secret),
    ("tmp-write", "echo x > /tmp/planted; ls /tmp", no_secret),
    (
        "host-unix-socket",
        "python3 -c \"import socket,os; s=socket.socket(socket.AF_UNIX); s.connect(os.environ['OUT']+'/../host.sock')\"",
        no_secret,
    ),
    (
        "abstract-socket",
        "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('\\0peri-host')\" 2>&1 || echo refused",
        no_secret,
    ),
    (
        "dns",
        "getent hosts example.com || echo no-dns; python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), 2)\" 2>&1 | tail -1",
        says("Connected"),
    ),
    (
        "tcp-out",
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', 22), 1); print('OPEN')\" 2>&1 | tail -1",
        says("OPEN"),
    ),
    (
        "mount-again",
        'mount --bind "$OUT" ws2 2>&1; umount .git/hooks 2>&1; echo x > .git/hooks/pre-commit',
        no_secret,
    ),
    (
        "unshare",
        "unshare -rm bash -c 'umount .git/hooks; echo x > .git/hooks/pre-commit' 2>&1",
        no_secret,
    ),
    ("host-pids", f"ls /proc | grep -x {os.getpid()} && echo SAW-HOST", says("SAW-HOST")),
    ("kill-host", f"kill -0 {os.getpid()} 2>/dev/null && echo SAW-HOST", says("SAW-HOST")),
    (
        "host-environ",
        "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep PERI_CORPUS_SECRET",
        no_secret,
    ),
]


@pytest.mark.parametrize(("name", "command", "held"), ATTEMPTS, ids=[a[0] for a in ATTEMPTS])
def test_attempt_is_held(
    box: Box,
    name: str,
    command: str,
    held: Callable[[str, Box], bool],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PERI_CORPUS_SECRET", SECRET)  # in this process only, never handed on
    output = box.run(command)
    assert held(output, box), output
    assert box.unchanged(), output


def test_corpus_is_large_enough() -> None:
    assert len(ATTEMPTS) + 2 >= 30


def test_setsid_and_nohup_children_die_with_the_command(box: Box) -> None:
    box.run(
        "setsid bash -c 'sleep 1; echo x > late.txt' & nohup bash -c 'sleep 1; echo y > late2.txt' &"
    )
    time.sleep(1.5)
    assert not (box.ws / "late.txt").exists() and not (box.ws / "late2.txt").exists()


def test_tiocsti_cannot_type_into_the_terminal(box: Box) -> None:
    """In a real pty: a command that pushes `echo PWNED` into its terminal's input with TIOCSTI
    must not reach the shell that reads that terminal after it."""
    script = (
        "import fcntl, termios\n"
        "for fd in (0, 1, 2):\n"
        "    try:\n"
        "        [fcntl.ioctl(fd, termios.TIOCSTI, c) for c in b'echo PWNED\\n']\n"
        "    except OSError as e:\n"
        "        print('refused', e)\n"
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(box.home)}
    wrapped = box.sandbox.wrap([sys.executable, "-c", script], env, box.ws)
    pid, fd = pty.fork()
    if pid == 0:  # the child: the sandboxed command, then read what the terminal holds
        os.execvpe(
            "bash",
            ["bash", "-c", '"$@"; read -t 1 line; echo "got:$line"', "x", *wrapped.argv],
            wrapped.env,
        )
    output = b""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
    os.waitpid(pid, 0)
    wrapped.finish()
    assert b"got:echo PWNED" not in output, output
