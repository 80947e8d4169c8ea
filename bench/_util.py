"""Shared helpers for the benchmark scripts: timing, statistics, memory, tmux, session generation.

Every script prints medians of several runs and ratios against a baseline measured in the same
run; absolute times on these (noisy, 2-core) machines mean little on their own.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import platform
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"
VENV_BIN = REPO / ".venv" / "bin"
PY = str(VENV_BIN / "python") if (VENV_BIN / "python").exists() else sys.executable
PERI = str(VENV_BIN / "peri") if (VENV_BIN / "peri").exists() else shutil.which("peri") or "peri"

if str(REPO) not in sys.path:  # so `bench/x.py` run from anywhere imports peri_cli and tests/
    sys.path.insert(0, str(REPO))


# --- statistics and formatting -----------------------------------------------------------------


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def percentile(xs: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100); nan for no data."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = max(0, min(len(s) - 1, round(p / 100 * len(s) + 0.5) - 1))
    return s[k]


def ms(seconds: float) -> str:
    if math.isnan(seconds):
        return "n/a"
    return f"{seconds * 1000:.1f} ms" if seconds < 10 else f"{seconds:.1f} s"


def secs(seconds: float) -> str:
    return "n/a" if math.isnan(seconds) else f"{seconds:.3f} s"


def ratio(value: float, baseline: float) -> str:
    if not baseline or math.isnan(value) or math.isnan(baseline):
        return "n/a"
    return f"{value / baseline:.2f}x"


def mb(n_bytes: float) -> str:
    return f"{n_bytes / 1e6:.1f} MB"


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table, columns padded so it also reads well in a terminal."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
        for row in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def banner(title: str) -> None:
    """Name, date, machine and commit, so a pasted result says where it came from."""
    try:
        rev = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        rev, dirty = "?", ""
    print(f"# {title}")
    print(
        f"date {_dt.datetime.now().isoformat(timespec='minutes')} · {os.cpu_count()} cores · "
        f"{platform.machine()} · Python {platform.python_version()} · "
        f"commit {rev}{' +uncommitted changes' if dirty else ''}"
    )
    print()


# --- timing ----------------------------------------------------------------------------------


def compile_peri() -> None:
    """Write peri_cli's bytecode, as a user's first start does. The bench environment (and many
    shells here) set PYTHONDONTWRITEBYTECODE, which otherwise left every timed run compiling
    Peri's ~250 modules from source, while the SDKs' bytecode was written at install."""
    import compileall

    compileall.compile_dir(str(REPO / "peri_cli"), quiet=1)


def load() -> str:
    """The 1-minute load average, quoted beside a figure (this machine is shared)."""
    try:
        return f"load {os.getloadavg()[0]:.1f}"
    except OSError:
        return "load ?"


def time_call(fn: Callable[[], object], runs: int, *, warmup: int = 1) -> list[float]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def time_cmd(
    argv: Sequence[str],
    runs: int,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    warmup: int = 1,
) -> list[float]:
    """Wall time of a command, run `runs` times (after `warmup` unmeasured runs)."""

    def once() -> float:
        t = time.perf_counter()
        proc = subprocess.run(
            list(argv),
            env=dict(env) if env is not None else None,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
        elapsed = time.perf_counter() - t
        if proc.returncode != 0:
            raise RuntimeError(
                f"{shlex.join(argv)} failed ({proc.returncode}): {proc.stderr[-500:]!r}"
            )
        return elapsed

    for _ in range(warmup):
        once()
    return [once() for _ in range(runs)]


def interleaved(
    cases: Mapping[str, Callable[[], float]], runs: int, *, warmup: int = 1
) -> dict[str, list[float]]:
    """Run every case once per round, `runs` rounds: noise hits all cases alike."""
    for _ in range(warmup):
        for fn in cases.values():
            fn()
    out: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(runs):
        for name, fn in cases.items():
            out[name].append(fn())
    return out


# --- memory ----------------------------------------------------------------------------------


def proc_status_kb(key: str, pid: int | str = "self") -> int | None:
    """A kB field of /proc/<pid>/status (VmHWM = peak RSS, VmRSS = current RSS)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def peak_rss_mb(pid: int | str = "self") -> float:
    kb = proc_status_kb("VmHWM", pid)
    return kb / 1024 if kb is not None else float("nan")


# --- environments ------------------------------------------------------------------------------


def bench_env(peri_home: Path, **extra: str) -> dict[str, str]:
    """A clean environment: a temp PERI_HOME, a dummy key and a dead local endpoint (no network)."""
    env = {
        "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(peri_home.parent),
        "PERI_HOME": str(peri_home),
        "LANG": os.environ.get("LANG", "C.UTF-8") or "C.UTF-8",
        "ANTHROPIC_API_KEY": "bench-dummy-key",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.update(extra)
    return env


@contextlib.contextmanager
def temp_home(prefix: str = "peri-bench-") -> Iterator[tuple[Path, Path]]:
    """(peri_home, workspace) in a fresh temp dir, removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        home = root / "peri-home"
        ws = root / "workspace"
        home.mkdir()
        ws.mkdir()
        yield home, ws
    finally:
        shutil.rmtree(root, ignore_errors=True)


# --- tmux ------------------------------------------------------------------------------------


def tmux_available() -> bool:
    return shutil.which("tmux") is not None


def _term() -> str:
    for d in ("/usr/share/terminfo", "/lib/terminfo", "/etc/terminfo"):
        if Path(d, "t", "tmux-256color").exists():
            return "tmux-256color"
    return "screen-256color"


@dataclass
class Screen:
    text: str
    alt: bool
    dead: bool
    pid: int


class Tmux:
    """A private tmux server (its own socket) with one pane that benchmarks respawn commands in."""

    _count = 0

    def __init__(self, width: int = 120, height: int = 40) -> None:
        Tmux._count += 1  # a fresh socket each time: a killed server may still hold the old one
        self.sock = f"peri-bench-{os.getpid()}-{Tmux._count}"
        self.target = "bench:0.0"
        self.term = _term()
        self._tm(
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "bench",
            "-x",
            str(width),
            "-y",
            str(height),
            "sleep 100000",
        )
        self._tm("set-option", "-g", "remain-on-exit", "on")
        self._tm("set-option", "-g", "default-terminal", self.term)
        self._tm("set-option", "-s", "escape-time", "0")

    def _tm(self, *args: str) -> str:
        proc = subprocess.run(
            ["tmux", "-L", self.sock, *args], capture_output=True, text=True, check=False
        )
        return proc.stdout

    def spawn(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> float:
        """Run argv in the pane (replacing what ran there); returns the perf_counter at launch."""
        env = {**env, "TERM": self.term, "COLORTERM": "truecolor"}
        assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        cmd = f"cd {shlex.quote(str(cwd))} && exec env -i {assigns} {shlex.join(argv)}"
        t0 = time.perf_counter()
        self._tm("respawn-pane", "-k", "-t", self.target, cmd)
        return t0

    def screen(self) -> Screen:
        out = self._tm(
            "capture-pane",
            "-p",
            "-t",
            self.target,
            ";",
            "display-message",
            "-p",
            "-t",
            self.target,
            "#{alternate_on} #{pane_dead} #{pane_pid}",
        )
        text, _, meta = out.rstrip("\n").rpartition("\n")
        parts = meta.split()
        if len(parts) != 3:
            return Screen(out, False, False, 0)
        return Screen(text, parts[0] == "1", parts[1] == "1", int(parts[2]))

    def send(self, text: str, *, literal: bool = True) -> None:
        if literal:
            self._tm("send-keys", "-t", self.target, "-l", text)
        else:
            self._tm("send-keys", "-t", self.target, text)

    def wait(
        self, predicate: Callable[[Screen], bool], timeout: float, interval: float = 0.005
    ) -> tuple[float | None, Screen]:
        """Poll the pane until predicate(screen); (perf_counter when seen or None, last screen)."""
        deadline = time.perf_counter() + timeout
        while True:
            s = self.screen()
            now = time.perf_counter()
            if predicate(s):
                return now, s
            if s.dead or now > deadline:
                return None, s
            time.sleep(interval)

    def stop_pane(self) -> None:
        self._tm("respawn-pane", "-k", "-t", self.target, "sleep 100000")

    def close(self) -> None:
        self._tm("kill-server")

    def __enter__(self) -> Tmux:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def drawn(s: Screen) -> bool:
    """A TUI's first screen: the alternate screen is on and shows something."""
    return s.alt and bool(s.text.strip())


@dataclass
class StartSample:
    first_draw: float  # seconds from launch to the first non-empty alternate screen
    ready: float  # seconds from launch until a typed probe is echoed on screen
    peak_rss_mb: float
    ok: bool = True
    error: str = ""


def measure_tui_start(
    tmux: Tmux,
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    *,
    probe: str = "zqbenchprobe",
    marker: str | None = None,
    timeout: float = 30.0,
    settle: float = 0.0,
) -> StartSample:
    """Launch a TUI in the pane; time its first drawn screen (with `marker`, if given, on it) and
    the moment a probe typed after that is echoed (the app reads input and repaints). Peak RSS is
    read when the probe shows, or `settle` seconds after launch if that is later."""
    t0 = tmux.spawn(argv, env, cwd)
    try:
        seen, s = tmux.wait(lambda s: drawn(s) and (marker is None or marker in s.text), timeout)
        if seen is None:
            return StartSample(
                float("nan"), float("nan"), float("nan"), False, _why(s, "no first screen")
            )
        first = seen - t0
        tmux.send(probe)
        echoed, s = tmux.wait(lambda s: probe in s.text, timeout)
        if settle:  # let start-up work that runs after the first screen finish (peak RSS)
            time.sleep(max(0.0, t0 + settle - time.perf_counter()))
        rss = peak_rss_mb(s.pid) if s.pid else float("nan")
        if echoed is None:
            return StartSample(first, float("nan"), rss, False, _why(s, "probe never echoed"))
        return StartSample(first, echoed - t0, rss)
    finally:
        tmux.stop_pane()


def _why(s: Screen, what: str) -> str:
    tail = " | ".join(line.strip() for line in s.text.splitlines() if line.strip())[-300:]
    return f"{what}{' (process exited)' if s.dead else ''}: {tail}"


TUI_PHASES = """
import time
T = {"python": time.perf_counter()}
import json, os, sys
from peri_cli.cli import build_parser
T["import cli"] = time.perf_counter()
from peri_cli.sdk.runtime import build_runtime
T["import runtime (core, pydantic)"] = time.perf_counter()
from peri_cli.tui.app import PeriApp
T["import tui.app (textual, widgets)"] = time.perf_counter()
from textual.screen import Screen
_update = Screen._on_timer_update
def _timed(self):
    first = "app running -> first frame starts" not in T
    if first:
        T["app running -> first frame starts"] = time.perf_counter()
    _update(self)
    if first:
        T["first frame (layout + render + write)"] = time.perf_counter()
        with open(os.environ["PERI_BENCH_PHASES"] + ".tmp", "w") as f:
            json.dump(T, f)
        os.replace(os.environ["PERI_BENCH_PHASES"] + ".tmp", os.environ["PERI_BENCH_PHASES"])
Screen._on_timer_update = _timed
runtime = build_runtime(build_parser().parse_args(sys.argv[1:]), os.environ)
T["build_runtime (settings, guides, session file)"] = time.perf_counter()
app = PeriApp(runtime, None)
T["PeriApp()"] = time.perf_counter()
app.run()
"""


# `peri` (TUI) with an estimate-only token counter: no tiktoken warm-up in a thread at mount.
NO_WARM = """
import os, sys
from peri_cli.cli import build_parser
from peri_cli.context.tokens import TokenCounter
from peri_cli.sdk.runtime import build_runtime
from peri_cli.tui.app import PeriApp
runtime = build_runtime(build_parser().parse_args(sys.argv[1:]), os.environ)
PeriApp(runtime, None, counter=TokenCounter(encoding_path=None)).run()
runtime.close()
"""


def tui_phases(
    scratch: Path,
    env: Mapping[str, str],
    ws: Path,
    peri_args: Sequence[str],
    runs: int,
    *,
    title: str = "Where peri's TUI start goes",
) -> str:
    """A copy of cli.main's TUI path with timestamps on the launcher's clock, run under tmux like
    the real thing: interpreter, imports, build_runtime, PeriApp(), mount, first frame."""
    script = scratch / "peri_phases.py"
    script.write_text(TUI_PHASES)
    out = scratch / "phases.json"
    per_phase: dict[str, list[float]] = {}
    with Tmux() as tmux:
        for r in range(runs + 1):
            out.unlink(missing_ok=True)
            t0 = tmux.spawn(
                [PY, str(script), *peri_args], {**env, "PERI_BENCH_PHASES": str(out)}, ws
            )
            tmux.wait(lambda s: drawn(s) and out.exists(), 60)
            tmux.stop_pane()
            if not r or not out.exists():
                continue
            stamps = json.loads(out.read_text())
            prev = t0
            for name, t in [("launch -> interpreter ready", stamps.pop("python")), *stamps.items()]:
                per_phase.setdefault(name, []).append(t - prev)
                prev = t
    rows = [[k, ms(median(v))] for k, v in per_phase.items()]
    rows.append(
        ["sum (to the end of the first frame)", ms(sum(median(v) for v in per_phase.values()))]
    )
    return f"## {title} (median of {runs}; launcher's clock)\n" + table(["phase", "time"], rows)


# --- fake server -----------------------------------------------------------------------------


@contextlib.contextmanager
def fake_server(script: list[dict[str, Any]]) -> Iterator[str]:
    """tests/fakeserver.py in a subprocess; yields its base URL."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(script, f)
        script_path = f.name
    proc = subprocess.Popen(
        [PY, str(REPO / "tests" / "fakeserver.py"), "--port", "0", "--script", script_path],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"LISTENING (\d+)", line)
        if not m:
            raise RuntimeError(f"fake server did not start: {line!r}")
        yield f"http://127.0.0.1:{m.group(1)}"
    finally:
        proc.terminate()
        proc.wait(timeout=5)
        os.unlink(script_path)


# --- session generation ----------------------------------------------------------------------

_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "with",
    "as",
    "on",
    "be",
    "this",
    "by",
    "are",
    "from",
    "at",
    "or",
    "an",
    "not",
    "file",
    "function",
    "value",
    "return",
    "error",
    "test",
    "config",
    "build",
    "session",
    "request",
    "message",
    "token",
    "window",
    "cache",
    "read",
    "write",
    "edit",
    "path",
    "line",
    "output",
    "input",
    "result",
    "check",
    "update",
    "change",
    "fix",
    "add",
    "remove",
    "module",
    "class",
    "method",
    "import",
    "parse",
    "load",
    "save",
    "list",
    "dict",
    "string",
    "number",
    "index",
    "range",
    "loop",
    "branch",
    "commit",
    "merge",
    "diff",
    "patch",
    "server",
    "client",
    "stream",
    "event",
    "handler",
    "widget",
    "render",
    "frame",
    "layout",
]
_IDENT = [w for w in _WORDS if len(w) > 3]


def _code_line(rng: random.Random) -> str:
    indent = "    " * rng.choice((0, 1, 1, 2, 2, 3))
    a, b, c = rng.choice(_IDENT), rng.choice(_IDENT), rng.choice(_IDENT)
    kind = rng.random()
    if kind < 0.25:
        return f"{indent}{a}_{b} = {c}({rng.choice(_IDENT)}, {rng.randint(0, 999)})"
    if kind < 0.40:
        return f"{indent}def {a}_{b}(self, {c}: str) -> int:"
    if kind < 0.55:
        return f"{indent}if {a}.{b} is not None and {c} > {rng.randint(1, 64)}:"
    if kind < 0.70:
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 12)))
        return f"{indent}# {words}"
    if kind < 0.80:
        return f"{indent}return {a}.{b}({c}) or {{}}"
    if kind < 0.90:
        return f'{indent}log.info("{a} {b}: %s", {c})'
    return ""


class Corpus:
    """Deterministic code-like text; slices of it make tool results cheaply."""

    def __init__(self, seed: int = 7, lines: int = 6000) -> None:
        rng = random.Random(seed)
        self.lines = [_code_line(rng) for _ in range(lines)]
        self.text = "\n".join(self.lines) + "\n"
        self.rng = rng

    def chunk(self, n_chars: int) -> str:
        if n_chars >= len(self.text):
            reps = n_chars // len(self.text) + 1
            return (self.text * reps)[:n_chars]
        start = self.rng.randrange(0, len(self.text) - n_chars)
        start = self.text.rfind("\n", 0, start) + 1
        return self.text[start : start + n_chars]

    def prose(self, n_words: int) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(n_words)).capitalize() + "."


def result_size(rng: random.Random) -> int:
    """Tool result sizes: mostly a few KB, a quarter tens of KB, a few huge (logs, big files)."""
    x = rng.random()
    if x < 0.70:
        return rng.randint(400, 6_000)
    if x < 0.95:
        return rng.randint(10_000, 40_000)
    return rng.randint(100_000, 250_000)


@dataclass
class GenStats:
    path: Path
    session_id: str
    bytes: int = 0
    entries: int = 0
    messages: int = 0
    turns: int = 0
    full_compactions: int = 0
    micro_entries: int = 0
    tail_marker: str = ""
    visible_messages: int = 0
    visible_bytes: int = 0
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def make_snapshot(workspace: Path) -> Any:
    """The real frozen prompt, as a new session would store it."""
    from peri_cli.context.snapshot import SnapshotInputs, build_snapshot

    return build_snapshot(
        SnapshotInputs(
            workspace=workspace, today=_dt.date.today(), platform="Linux bench", is_git=True
        )
    )


def session_path(peri_home: Path, workspace: Path, session_id: str) -> Path:
    from peri_cli.session.store import SessionStore

    store = SessionStore(peri_home, workspace)
    store.root.mkdir(parents=True, exist_ok=True)
    return store.path_of(session_id)


def generate_session(  # noqa: C901, PLR0915
    peri_home: Path,
    workspace: Path,
    target_bytes: int,
    *,
    seed: int = 1,
    compact_every: int = 2_000_000,
    micro_every: int = 500_000,
    corpus: Corpus | None = None,
    tag: str = "",
) -> GenStats:
    """Write a realistic session of about `target_bytes` with the real entry types.

    Turns: a user prompt, 1-5 model steps (sometimes signed thinking, a little text, one or two
    tool calls with their results), and a final answer. Every `micro_every` bytes a ProjectionEntry
    truncates older large results; every `compact_every` bytes a Full compact (summary message,
    CompactBoundary, re-injection message) starts a new visible history, as auto-compaction would
    keep it under a ~200k-token window. The last message carries `tail_marker`.
    """
    from peri_cli.base.ids import uuid7
    from peri_cli.base.messages import (
        Message,
        TextPart,
        ThinkingPart,
        ToolResultPart,
        ToolUsePart,
        Usage,
        user_text,
    )
    from peri_cli.context.directives import TruncateResult, dump_directives
    from peri_cli.session.transcript import (
        CompactBoundary,
        Header,
        MessageEntry,
        ProjectionEntry,
        dump_entry,
    )

    t_start = time.perf_counter()
    rng = random.Random(seed)
    corpus = corpus or Corpus(seed)
    session_id = uuid7()
    path = session_path(peri_home, workspace, session_id)
    stats = GenStats(path=path, session_id=session_id)
    stats.tail_marker = f"TAILMARK{tag or seed}END"
    out = open(path, "w", encoding="utf-8")  # noqa: SIM115
    # What the model currently sees: (entry id, tool_use_id, result chars) of uncut results.
    big_results: list[tuple[str, str, int]] = []
    visible_since = 0  # file offset where the visible history starts
    visible_msgs = 0
    next_micro = micro_every
    # Full compactions at target - k * compact_every, so every size ends with a visible tail of
    # about `compact_every` bytes (what a fixed context window keeps), however long the file.
    full_at = sorted(
        target_bytes - k * compact_every
        for k in range(1, target_bytes // compact_every + 1)
        if target_bytes - k * compact_every >= compact_every // 2
    )
    tool_n = 0

    def write(entry: Any) -> None:
        line = dump_entry(entry) + "\n"
        out.write(line)
        stats.bytes += len(line.encode("utf-8"))
        stats.entries += 1

    def message(msg: Message, **kw: Any) -> str:
        nonlocal visible_msgs
        entry = MessageEntry(message=msg, **kw)
        write(entry)
        stats.messages += 1
        visible_msgs += 1
        return entry.id

    write(
        Header(
            session_id=session_id,
            workspace=str(workspace.resolve()),
            snapshot=make_snapshot(workspace),
        )
    )
    tokens_seen = 20_000
    while stats.bytes < target_bytes:
        stats.turns += 1
        message(user_text(f"Turn {stats.turns}: " + corpus.prose(rng.randint(12, 60))))
        for _step in range(rng.randint(1, 5)):
            parts: list[Any] = []
            if rng.random() < 0.4:
                parts.append(
                    ThinkingPart(
                        thinking=corpus.prose(rng.randint(30, 150)),
                        signature=f"sig{rng.getrandbits(128):032x}",
                    )
                )
            if rng.random() < 0.6:
                parts.append(TextPart(text=corpus.prose(rng.randint(8, 40))))
            uses = []
            for _ in range(1 if rng.random() < 0.8 else 2):
                tool_n += 1
                name = rng.choice(("Read", "Read", "Bash", "Grep", "Edit", "Glob"))
                if name == "Edit":
                    inp = {
                        "file_path": f"src/{rng.choice(_IDENT)}.py",
                        "old_string": corpus.chunk(rng.randint(80, 600)),
                        "new_string": corpus.chunk(rng.randint(80, 800)),
                    }
                elif name == "Bash":
                    inp = {"command": f"pytest -q tests/test_{rng.choice(_IDENT)}.py"}
                elif name in ("Grep", "Glob"):
                    inp = {"pattern": rng.choice(_IDENT), "path": "src"}
                else:
                    inp = {"file_path": f"src/{rng.choice(_IDENT)}/{rng.choice(_IDENT)}.py"}
                uses.append(ToolUsePart(id=f"toolu_{tool_n:08d}", name=name, input=inp))
            parts.extend(uses)
            tokens_seen += 800
            usage = Usage(
                input_tokens=rng.randint(5, 400),
                output_tokens=rng.randint(50, 900),
                cache_read_input_tokens=tokens_seen,
                cache_creation_input_tokens=800,
            )
            message(
                Message(role="assistant", content=parts),
                usage=usage,
                model="claude-sonnet-4-5",
                cache_read_share=round(usage.cache_read_share, 4),
            )
            results = []
            for use in uses:
                size = 120 if use.name == "Edit" else result_size(rng)
                text = "The file was edited." if use.name == "Edit" else corpus.chunk(size)
                results.append(
                    ToolResultPart(
                        tool_use_id=use.id,
                        content=[TextPart(text=text)],
                        is_error=rng.random() < 0.03,
                    )
                )
            rid = message(Message(role="user", content=results))
            for r in results:
                n = len(r.text)
                if n > 8_000:
                    big_results.append((rid, r.tool_use_id, n))
            tokens_seen += sum(len(r.text) for r in results) // 4
        final = corpus.prose(rng.randint(40, 200))
        message(
            Message(role="assistant", content=[TextPart(text=final)]),
            usage=Usage(input_tokens=50, output_tokens=300, cache_read_input_tokens=tokens_seen),
            model="claude-sonnet-4-5",
        )
        if stats.bytes >= next_micro and len(big_results) > 6:
            # Micro: cut the older big results (the newest few stay whole, as protected turns do).
            old, big_results = big_results[:-4], big_results[-4:]
            directives = [
                TruncateResult(message_id=mid, tool_use_id=tid, head=200, tail=200)
                for mid, tid, _n in old
            ]
            freed = sum(n for *_, n in old) // 4
            write(
                ProjectionEntry(
                    directives=dump_directives(directives),
                    tokens_before=tokens_seen,
                    tokens_after=tokens_seen - freed,
                )
            )
            tokens_seen -= freed
            stats.micro_entries += 1
            next_micro = stats.bytes + micro_every
        if full_at and stats.bytes >= full_at[0]:
            while full_at and stats.bytes >= full_at[0]:
                full_at.pop(0)
            excluded = stats.messages - stats.extra.get("msgs_at_last_full", 0)
            summary = MessageEntry.model_validate(
                {
                    "message": user_text(
                        "This session continues from an earlier conversation that was compacted. "
                        + "\n\n".join(corpus.prose(rng.randint(80, 160)) for _ in range(8))
                    ),
                    "origin": "compact_summary",
                }
            )
            visible_msgs = 0
            write(summary)
            stats.messages += 1
            visible_msgs += 1
            visible_since = stats.bytes
            write(
                CompactBoundary(
                    summary_id=summary.id,
                    tokens_before=tokens_seen,
                    tokens_after=6_000,
                    excluded_messages=excluded,
                )
            )
            message(
                user_text(
                    "Files read before the compaction, as they are now:\n"
                    + corpus.chunk(rng.randint(8_000, 30_000))
                ),
                origin="compact_reinject",
            )
            stats.full_compactions += 1
            stats.extra["msgs_at_last_full"] = stats.messages
            tokens_seen = 12_000
            big_results = []
    # A last, recognisable exchange: the TUI must show it after a resume.
    message(user_text(f"One last question {stats.tail_marker}?"))
    message(
        Message(role="assistant", content=[TextPart(text=f"Final answer {stats.tail_marker}.")]),
        usage=Usage(input_tokens=10, output_tokens=20, cache_read_input_tokens=tokens_seen),
        model="claude-sonnet-4-5",
    )
    out.close()
    stats.visible_messages = visible_msgs
    stats.visible_bytes = stats.bytes - visible_since
    stats.seconds = time.perf_counter() - t_start
    return stats


def generate_small_session(
    peri_home: Path, workspace: Path, *, rng: random.Random, corpus: Corpus, snapshot: Any
) -> int:
    """A short session (2-12 turns, small results) written as plain transcript lines; its bytes."""
    from peri_cli.base.ids import uuid7
    from peri_cli.base.messages import Message, TextPart, ToolResultPart, ToolUsePart, user_text
    from peri_cli.session.transcript import Header, MessageEntry, dump_entry

    session_id = uuid7()
    path = session_path(peri_home, workspace, session_id)
    lines = [
        dump_entry(
            Header(session_id=session_id, workspace=str(workspace.resolve()), snapshot=snapshot)
        )
    ]
    for t in range(rng.randint(2, 12)):
        lines.append(dump_entry(MessageEntry(message=user_text(corpus.prose(rng.randint(5, 40))))))
        use = ToolUsePart(id=f"toolu_{t}", name="Read", input={"file_path": "a.py"})
        lines.append(dump_entry(MessageEntry(message=Message(role="assistant", content=[use]))))
        res = ToolResultPart(
            tool_use_id=use.id, content=[TextPart(text=corpus.chunk(rng.randint(200, 3000)))]
        )
        lines.append(dump_entry(MessageEntry(message=Message(role="user", content=[res]))))
        lines.append(
            dump_entry(
                MessageEntry(
                    message=Message(
                        role="assistant", content=[TextPart(text=corpus.prose(rng.randint(10, 80)))]
                    )
                )
            )
        )
    data = "\n".join(lines) + "\n"
    path.write_text(data, encoding="utf-8")
    return len(data)


def child_json(
    code: str,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 300,
) -> tuple[dict[str, Any], float]:
    """Run Python code in a fresh interpreter that prints one JSON line last: (data, wall s)."""
    t = time.perf_counter()
    proc = subprocess.run(
        [PY, "-c", code],
        env=dict(env) if env else None,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1]), wall
