"""The reaper: a small process that starts Bash's commands for Peri and ends every process they
leave, Peri killed with SIGKILL included (`reaping.py` is Peri's side).

Run by path (`python -I -S reaper.py FD`), stdlib only, so it starts in milliseconds. Each request
on the socket FD carries four file descriptors: a file holding the command line as JSON (no size
limit), the command's output, a status pipe and a control pipe; a keeper forked ahead of time takes
it. A keeper is the subreaper (`PR_SET_CHILD_SUBREAPER`) of its one command: whatever the command
starts and leaves (`setsid`, `nohup`, double forks) is re-parented to it, not to init, so it finds
them all in its own tree and ends them (SIGTERM, a grace period, SIGKILL): in the foreground when
the shell exits, in the background when told to stop, and when the control pipe closes (Peri is
gone). What a command asked another, already running program to start (a tmux server's window,
`docker run -d`) is that program's child, not the command's, and is left alone.

Status lines a keeper writes: `started PID`, `failed ERRNO TEXT`, `exited CODE` (negative: the
signal), `ended LEFT SURVIVORS` (processes it found left running, and how many of them it could
not end), then it exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import sys
import time

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
POLL = 0.02
# Once Peri is gone nobody waits for a polite exit: SIGTERM, at most this long, then SIGKILL.
ORPHANED_GRACE = 1.0
# SIGKILL rounds for a tree that keeps forking while it is ended.
KILL_ROUNDS = 100
_FDS = 4  # per request: the JSON spec, output, status, control
_RESET = ("SIGPIPE", "SIGXFSZ", "SIGINT", "SIGQUIT", "SIGTERM", "SIGHUP", "SIGCHLD", "SIGTTOU")


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _subreaper() -> None:
    _prctl(PR_SET_CHILD_SUBREAPER, 1)


def _say(fd: int, line: str) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, (line + "\n").encode())


def _state(pid: int) -> bytes | None:
    """The process's state letter (None: gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _children(pid: int) -> list[int]:
    """Direct children of `pid`, from every thread's `children` list."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                found += [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            continue
    return found


def _children_by_scan(pid: int) -> list[int]:
    """The same from every process's parent (kernels without `children` lists)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    if int(f.read().rsplit(b")", 1)[1].split()[1]) == pid:
                        found.append(int(name))
            except (OSError, IndexError, ValueError):
                continue
    return found


_PROC = os.path.isdir("/proc/self")
_HAS_CHILD_LISTS = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def descendants(root: int, skip: frozenset[int] = frozenset()) -> list[int]:
    """Live processes under `root` (zombies left out), except `skip`; [] without /proc."""
    if not _PROC:
        return []
    children = _children if _HAS_CHILD_LISTS else _children_by_scan
    seen: list[int] = []
    todo = children(root)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.append(pid)
        todo += children(pid)
    return [p for p in seen if p not in skip and _state(p) not in (None, b"Z", b"X")]


REAPED: dict[int, int] = {}  # every child this process collected: {pid: wait status}


def reap() -> dict[int, int]:
    """Collect every child that has ended: {pid: wait status} of those collected now."""
    ended: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        ended[pid] = status
    REAPED.update(ended)
    return ended


def _namespace(pid: int | str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


_OWN_NAMESPACE = _namespace("self") if _PROC else None


def _sandboxed(pid: int) -> bool:
    """In another PID namespace: inside a sandbox, which ends it when the command inside ends
    (`bwrap --unshare-pid`), so it is not something the command left running here."""
    theirs = _namespace(pid)
    return theirs is not None and _OWN_NAMESPACE is not None and theirs != _OWN_NAMESPACE


def end_tree(grace: float, group: int | None = None) -> tuple[int, int]:
    """End every live process under this one: SIGTERM, up to `grace` s for them to exit, then
    SIGKILL until none is left (a sandbox's own processes: SIGKILL at once, unwaited; the
    sandbox ends them anyway). (found: how many besides the shell `group`; survivors: those it
    may not signal.) Without /proc only the shell's process group can be found."""
    me, refused = os.getpid(), set[int]()

    def signal_all(sig: int) -> list[int]:
        mine = []
        for pid in descendants(me, frozenset(refused)):
            inside = _sandboxed(pid)
            if not inside:
                mine.append(pid)
            try:
                os.kill(pid, signal.SIGKILL if inside else sig)
            except PermissionError:
                refused.add(pid)
            except ProcessLookupError:
                pass
        if group is not None and not _PROC:  # (macOS: no subreaper either)
            with contextlib.suppress(OSError):
                os.killpg(group, sig)
        return mine

    def ours() -> list[int]:
        return [p for p in descendants(me, frozenset(refused)) if not _sandboxed(p)]

    found = len([p for p in signal_all(signal.SIGTERM) if p != group])
    deadline = time.monotonic() + grace
    while ours() and time.monotonic() < deadline:
        reap()
        time.sleep(POLL)
    for _ in range(KILL_ROUNDS):
        if not signal_all(signal.SIGKILL):
            break
        time.sleep(POLL / 4)
        reap()
    reap()
    return found, len([p for p in refused if _state(p) not in (None, b"Z", b"X")])


def _returncode(status: int) -> int:
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _program(name: str, env: dict[str, str]) -> str:
    """`name` looked up in the command's own PATH (Peri gives full paths; this is for others)."""
    if os.sep in name:
        return name
    for folder in env.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(2, f"No such file or directory: {name!r}")


def _start(spec: dict[str, object], out: int) -> int:
    """Spawn the command's shell in a new session, in its folder, stdin empty, stdout and stderr
    to `out`; its pid, or OSError with what failed (no such folder, no such program).
    posix_spawn (vfork underneath): a fork of this Python process cost 5-25 ms a command on a
    loaded machine."""
    argv = [str(a) for a in spec["argv"]]  # type: ignore[attr-defined]
    env = {str(k): str(v) for k, v in spec["env"].items()}  # type: ignore[attr-defined]
    os.chdir(str(spec["cwd"]))  # (this process keeps only this command)
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, out, 1),
        (os.POSIX_SPAWN_DUP2, out, 2),
    ]
    return os.posix_spawn(
        _program(argv[0], env),
        argv,
        env,
        file_actions=actions,
        setsid=True,
        setsigdef=[getattr(signal, name) for name in _RESET],
        setsigmask=[],
    )


def keep(spec_fd: int, out: int, status: int, control: int) -> None:
    """One command, start to end (in the keeper process)."""
    _subreaper()
    for fd in (out, status, control):  # (received over the socket: inheritable)
        os.set_inheritable(fd, False)
    with os.fdopen(spec_fd, "rb") as f:
        spec = json.loads(f.read())
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # (only so that the wake-up fd hears it)
    grace = float(spec.get("grace", 2.0))
    background = bool(spec.get("background"))
    try:
        shell = _start(spec, out)
    except OSError as e:
        _say(status, f"failed {e.errno or 0} {e.strerror or e}")
        return
    finally:
        os.close(out)
    _say(status, f"started {shell}")
    code: int | None = None
    while True:
        reap()
        if code is None and shell in REAPED:
            code = _returncode(REAPED[shell])
            _say(status, f"exited {code}")
        if code is not None and (not background or not _has_children()):
            found, survivors = end_tree(grace, shell)
            _say(status, f"ended {found} {survivors}")
            return
        ready, _, _ = select.select([control, wake_r], [], [], 1.0)
        with contextlib.suppress(BlockingIOError, InterruptedError):
            os.read(wake_r, 512)
        if control in ready:
            told = os.read(control, 1)
            found, survivors = end_tree(grace if told else min(grace, ORPHANED_GRACE), shell)
            if code is None:
                code = _returncode(REAPED[shell] if shell in REAPED else os.waitpid(shell, 0)[1])
                _say(status, f"exited {code}")
            _say(status, f"ended {found} {survivors}")
            return


def _has_children() -> bool:
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def serve(sock: socket.socket) -> None:
    """Keep one keeper forked and waiting on the socket (so that no fork is on a command's way),
    another as soon as it takes a request, until Peri's end of the socket closes."""
    _subreaper()  # a keeper that was killed leaves its command's tree here: ended at once
    # A command's parent is its keeper: closed to it as Peri is (no /proc/PID/mem, no ptrace).
    # A command's own exec makes it dumpable again.
    _prctl(PR_SET_DUMPABLE, 0)
    keepers: set[int] = set()
    while True:
        taken_r, taken_w = os.pipe()
        spare = os.fork()
        if spare == 0:
            os.close(taken_r)
            _wait_for_request(sock, taken_w)
        os.close(taken_w)
        keepers.add(spare)
        ready: list[int] = []
        while not ready:
            ready, _, _ = select.select([taken_r], [], [], 1.0)
            for pid, status in reap().items():
                keepers.discard(pid)
                if os.WIFSIGNALED(status):
                    _end_strays(keepers)
        taken = os.read(taken_r, 1)
        os.close(taken_r)
        if not taken:  # it ended without a request: Peri is gone
            return


def _wait_for_request(sock: socket.socket, taken: int) -> None:
    """A waiting keeper: take the next request, say so, keep its command (never returns)."""
    code = 0
    try:
        data, fds, _, _ = socket.recv_fds(sock, 16, _FDS)
        if data:  # (nothing: Peri's end closed)
            with contextlib.suppress(OSError):  # (the helper was killed: keep this one anyway)
                os.write(taken, b"t")
        os.close(taken)
        sock.close()
        if len(fds) == _FDS:
            keep(*fds)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _end_strays(keepers: set[int]) -> None:
    """Kill what a killed keeper left here (its command's tree, now this process's children)."""
    children = _children if _HAS_CHILD_LISTS else _children_by_scan
    for pid in children(os.getpid()) if _PROC else []:
        if pid not in keepers:
            for stray in [*descendants(pid), pid]:
                with contextlib.suppress(OSError):
                    os.kill(stray, signal.SIGKILL)
    reap()


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))
