"""Golden outputs of `peri -p` in its three output formats, compared byte for byte.

Each session below runs the real `peri` process against its own loopback fake server, once per
output format (text, json, stream-json), and compares its exit status, stdout and stderr with
`golden/<session>.<format>.txt`. Before the comparison only what differs from run to run or from
machine to machine is replaced, each by a stable placeholder:
  - UUIDs (session and SubAgent ids) -> <UUID-n>, numbered by first appearance, so equal ids stay
    equal; the session a setup run created -> <SETUP-SESSION-n>; an id's 8-character prefix (how
    Peri shortens it in text) -> the same name with -PREFIX;
  - the ids Peri gives OpenAI tool calls (9 random alphanumerics) -> <CALL-n>;
  - the temporary workspace, home and their parent -> <WORKSPACE>, <HOME>, <TMP>; the fake
    server's URL -> <SERVER>;
  - the `init` line's tools list -> "<TOOLS>" (checked to be sorted and to hold the core tools:
    `golden_tools.py`), so a new tool changes no golden file;
  - the result's `duration_ms` and `duration_api_ms` -> <MS>;
  - compaction figures (tokens_before/after, prefix_changed, pressure, the numbers in its detail
    and in "Compacted: A -> B tokens"): Peri estimates them over requests whose system prompt holds
    the workspace path and the platform, so they change with both.
Everything else is exact: usage, num_turns, tool ids of the Anthropic wire, messages, order.

Regenerate every golden file (these and `golden_sdk/`) after an intended change of the output:
`PERI_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/e2e/test_headless_golden.py
tests/e2e/test_headless_sdk_golden.py`, then read the diff before committing it.

What keeps the runs deterministic: every scripted reply pins its usage (the fake server would
otherwise count the request's bytes, which hold the workspace path, the platform and the date);
each reply holds at most one call that actually runs (calls that run together report in the order
they finish); Glob's files get fixed mtimes; retries are told `retry-after: 0`. The runs of all
selected tests start together on a small thread pool, each in its own workspace with its own
server, so the processes overlap.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Peri
from tests.e2e.golden_tools import tools_placeholder
from tests.fakeserver import FakeServer

GOLDEN_DIR = Path(__file__).parent / "golden"
FORMATS = ("text", "json", "stream-json")
UPDATE = os.environ.get("PERI_UPDATE_GOLDEN") == "1"
WORKERS = min(4, (os.cpu_count() or 1) + 1)  # peri runs are mostly CPU (SDK imports)

Item = dict[str, Any]


def reply(
    text: str | None = None,
    *calls: tuple[str, dict[str, Any]],
    tokens: tuple[int, int] = (1000, 20),
    cache_read: int = 0,
    **extra: Any,
) -> Item:
    """A scripted model reply with pinned usage: (input, output) tokens and cache reads."""
    item: Item = {
        "usage": {
            "input_tokens": tokens[0],
            "output_tokens": tokens[1],
            "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": 0,
        },
        **extra,
    }
    if text is not None:
        item["text"] = text
    if calls:
        item["tool_calls"] = [{"name": name, "input": arguments} for name, arguments in calls]
    return item


@dataclass(frozen=True)
class Run:
    """One `peri` invocation: its arguments (`{sid}` is the session the setup runs created) and
    the script the fake server answers it with."""

    args: tuple[str, ...]
    script: tuple[Item, ...] = ()


@dataclass(frozen=True)
class Session:
    name: str
    run: Run  # the run whose output is golden, once per format
    setup: tuple[Run, ...] = ()  # earlier runs (text format, output not compared)
    provider: str = "anthropic"
    files: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


def big_file(n: int) -> str:
    return "".join(
        f"line {k} of big_{n}: the quick brown fox jumps over the lazy dog {k * n}\n"
        for k in range(1, 81)
    )


SESSIONS: tuple[Session, ...] = (
    Session(
        "plain_text",
        Run(
            ("-p", "Say hello"),
            (
                reply(
                    'Hello — here is a short answer.\n\n- one\n- two "quoted"\n',
                    tokens=(40, 12),
                    cache_read=960,
                ),
            ),
        ),
    ),
    Session(
        "tools_files",
        Run(
            ("-p", "fix the typo and add notes", "--permission-mode", "accept-edits"),
            (
                reply("Reading first.", ("Read", {"file_path": "app.py"})),
                reply(
                    None,
                    ("Edit", {"file_path": "app.py", "old_string": "helo", "new_string": "hello"}),
                ),
                reply(None, ("Write", {"file_path": "NOTES.md", "content": "# Notes\nfixed\n"})),
                reply("Fixed the typo in app.py and wrote NOTES.md."),
            ),
        ),
        files={"app.py": "def greet():\n    return 'helo'\n"},
    ),
    Session(
        "tools_shell_search",
        Run(
            ("-p", "look around", "--allowedTools", "Bash(echo:*)"),
            (
                reply(None, ("Bash", {"command": "echo one; echo two >&2"})),
                reply(None, ("Grep", {"pattern": "TODO", "output_mode": "content"})),
                reply(None, ("Glob", {"pattern": "**/*.py"})),
                reply("Found one TODO in src/a.py."),
            ),
        ),
        files={
            "src/a.py": "x = 1\n# TODO: rename x\n",
            "src/b.py": "y = 2\n",
            "README.md": "nothing to do here\n",
        },
    ),
    Session(
        "denied_default",
        Run(
            ("-p", "clean up"),
            (
                reply(
                    "Cleaning.",
                    ("Bash", {"command": "rm -rf build"}),
                    ("Write", {"file_path": "a.txt", "content": "x"}),
                ),
                reply("I could not do it."),
            ),
        ),
    ),
    Session(
        "denied_rule",
        Run(
            (
                "-p",
                "tidy",
                "--permission-mode",
                "bypass",
                "--disallowedTools",
                "Bash(rm:*),Write",
            ),
            (
                reply(
                    None,
                    ("Bash", {"command": "rm -rf build"}),
                    ("Write", {"file_path": "a.txt", "content": "x"}),
                    ("Bash", {"command": "echo still allowed"}),
                ),
                reply("Only the echo ran."),
            ),
        ),
    ),
    Session(
        "compact_command",
        Run(
            ("-r", "{sid}", "-p", "/compact the file reading"),
            (
                reply(
                    "<summary>Goal: read big_0. Done: read it. Next: nothing.</summary>",
                    tokens=(3000, 40),
                ),
            ),
        ),
        setup=(
            Run(
                ("-p", "Please read big_0.txt", "--permission-mode", "bypass"),
                (reply(None, ("Read", {"file_path": "big_0.txt"})), reply("I read big_0.")),
            ),
        ),
        files={"big_0.txt": big_file(0)},
    ),
    Session(
        "auto_compact",
        Run(
            ("-p", "Read the three big files"),
            (
                reply(None, ("Read", {"file_path": "big_1.txt"}), tokens=(6000, 20)),
                reply(None, ("Read", {"file_path": "big_2.txt"}), tokens=(9000, 20)),
                reply(None, ("Read", {"file_path": "big_3.txt"}), tokens=(13500, 20)),
                reply(
                    "<summary>Goal: read big_1..3. Done: all three.</summary>", tokens=(7000, 30)
                ),
                reply("Read all three.", tokens=(5000, 20)),
            ),
        ),
        files={f"big_{n}.txt": big_file(n) for n in (1, 2, 3)},
        env={"PERI_CONTEXT_WINDOW": "16000"},
    ),
    Session(
        "subagent",
        Run(
            ("-p", "main task: delegate", "--permission-mode", "bypass"),
            (
                reply(
                    "Delegating.",
                    (
                        "Agent",
                        {"prompt": "Find the value of X in a.py", "description": "find X"},
                    ),
                    when="main task",
                ),
                reply(
                    None,
                    ("Grep", {"pattern": "X =", "output_mode": "content"}),
                    when="Find the value",
                ),
                reply("X is 42 (a.py line 1).", when="Find the value"),
                reply("The SubAgent found X = 42.", when="main task"),
            ),
        ),
        files={"a.py": "X = 42\n"},
    ),
    Session(
        "provider_retries_fail",
        Run(
            ("-p", "hi"),
            ({"status": 500, "retry_after": 0}, {"status": 529, "times": 4, "retry_after": 0}),
        ),
    ),
    Session("provider_bad_key", Run(("-p", "hi"), ({"status": 401},))),
    Session(
        "no_api_key",
        Run(("-p", "hi")),
        env={"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""},
    ),
    Session("unknown_session", Run(("-r", "0badc0de", "-p", "hi"))),
    Session(
        "max_turns",
        Run(
            ("-p", "loop", "--max-turns", "2"),
            (
                reply(None, ("Glob", {"pattern": "*.txt"})),
                reply(None, ("Glob", {"pattern": "*.md"})),
                reply("never reached"),
            ),
        ),
        files={"a.txt": "a\n"},
    ),
    Session(
        "resume_continue",
        Run(
            ("-c", "-p", "what was the word?"),
            (reply("The word was banana.", tokens=(1100, 6)),),
        ),
        setup=(Run(("-p", "remember the word banana"), (reply("Remembered."),)),),
    ),
    Session(
        "openai_tools",
        Run(
            ("-p", "read it", "--provider", "openai"),
            (
                reply("Let me look.", ("Read", {"file_path": "hello.txt"})),
                reply("It says hello.", tokens=(1200, 5), cache_read=800),
            ),
        ),
        provider="openai",
        files={"hello.txt": "hello\n"},
    ),
)
BY_NAME = {s.name: s for s in SESSIONS}


# --- running ------------------------------------------------------------------------------------


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    replacements: list[tuple[str, str]]  # (what varies, its placeholder), applied in order
    setup_ids: list[str]  # the sessions the setup runs created


def _prepare(root: Path, session: Session, server: FakeServer) -> Peri:
    workspace, home = root / "ws", root / "home"
    workspace.mkdir()
    home.mkdir()
    for i, (name, text) in enumerate(sorted(session.files.items())):
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        stamp = 1_700_000_000 + 1000 * i  # Glob lists the newest first
        os.utime(path, (stamp, stamp))
    return Peri(
        server=server,
        workspace=workspace,
        home=home,
        provider=session.provider,
        extra_env=dict(session.env),
    )


def _run(peri: Peri, args: tuple[str, ...]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "peri_cli", *args],
        check=False,
        cwd=peri.workspace,
        env=peri.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,  # bytes: no newline translation
        timeout=60,
    )


def record(session: Session, fmt: str, base: Path) -> Outcome:
    """Run the session's setup and then its golden run in `fmt`, in a fresh workspace."""
    root = Path(tempfile.mkdtemp(prefix=f"{session.name}.{fmt}.", dir=base))
    with FakeServer() as server:
        peri = _prepare(root, session, server)
        setup_ids: list[str] = []
        for step in session.setup:
            server.set_script(list(step.script))
            done = _run(peri, (*step.args, "--output-format", "json"))
            assert done.returncode == 0, done.stderr.decode()
            setup_ids.append(json.loads(done.stdout)["session_id"])
        server.set_script(list(session.run.script))
        sid = setup_ids[-1] if setup_ids else ""
        args = tuple(a.replace("{sid}", sid) for a in session.run.args)
        done = _run(peri, (*args, "--output-format", fmt))
        replacements = [
            (server.url, "<SERVER>"),
            *sorted(
                {
                    (str(p), label)
                    for p, label in (
                        (peri.workspace.resolve(), "<WORKSPACE>"),
                        (peri.workspace, "<WORKSPACE>"),
                        (peri.home.resolve(), "<HOME>"),
                        (peri.home, "<HOME>"),
                        (root.resolve(), "<TMP>"),
                        (root, "<TMP>"),
                    )
                },
                key=lambda pair: -len(pair[0]),
            ),
        ]
        return Outcome(
            done.returncode,
            done.stdout.decode("utf-8"),
            done.stderr.decode("utf-8"),
            replacements,
            setup_ids,
        )


UUID_RE = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
# Peri gives OpenAI tool calls ids of its own: 9 random alphanumerics.
OPENAI_CALL_ID_RE = re.compile(r'("(?:id|tool_use_id)": ")([A-Za-z0-9]{9})"')
# Compaction figures are Peri's token estimates over requests whose system prompt holds the
# workspace path and the platform (see the module's docstring).
ESTIMATES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r'("(?:tokens_before|tokens_after|prefix_changed)": )\d+'), r"\1<TOKENS>"),
    (re.compile(r'("pressure": )\d+(?:\.\d+)?'), r"\1<RATIO>"),
    (re.compile(r"\bfreed -?[\d,]+ tokens"), "freed <TOKENS> tokens"),
    (
        re.compile(r"changed for [\d,]+ tokens \(\d+% of the next request\)"),
        "changed for <TOKENS> tokens (<PERCENT> of the next request)",
    ),
    (re.compile(r"\bCompacted: \d+ -> \d+ tokens"), "Compacted: <TOKENS> -> <TOKENS> tokens"),
    # the result's wall-clock figures
    (re.compile(r'("duration(?:_api)?_ms": )\d+'), r"\1<MS>"),
)


def normalize(text: str, outcome: Outcome) -> str:
    """Replace what differs between runs with stable placeholders; nothing else."""
    for value, placeholder in outcome.replacements:
        text = text.replace(value, placeholder)
    # Each id keeps its own placeholder, so equal ids stay equal and different ones differ; an
    # 8-character prefix (how Peri shortens session and SubAgent ids) maps with its id.
    names = {sid: f"<SETUP-SESSION-{n}>" for n, sid in enumerate(outcome.setup_ids, 1)}
    for found in UUID_RE.findall(text):
        names.setdefault(found, f"<UUID-{len(names) + 1 - len(outcome.setup_ids)}>")
    text = UUID_RE.sub(lambda m: names[m.group(0)], text)
    prefixes = {full[:8]: name.replace(">", "-PREFIX>") for full, name in names.items()}
    text = re.sub(r"\b[0-9a-f]{8}\b", lambda m: prefixes.get(m.group(0), m.group(0)), text)
    calls: dict[str, str] = {}
    text = OPENAI_CALL_ID_RE.sub(
        lambda m: f'{m.group(1)}{calls.setdefault(m.group(2), f"<CALL-{len(calls) + 1}>")}"', text
    )
    for pattern, placeholder in ESTIMATES:
        text = pattern.sub(placeholder, text)
    return tools_placeholder(text)


def render(outcome: Outcome) -> str:
    """The golden file's text: exit status, stdout and stderr, normalized."""

    def part(title: str, text: str) -> str:
        end = "" if text.endswith("\n") or not text else "\n<no newline at end>\n"
        return f"--- {title} ---\n{text}{end}"

    raw = (
        f"--- exit {outcome.returncode} ---\n"
        + part("stdout", outcome.stdout)
        + part("stderr", outcome.stderr)
    )
    return normalize(raw, outcome)


# --- pytest -------------------------------------------------------------------------------------


class Recorder:
    """Starts every selected (session, format) run at once on a small pool, so the processes
    overlap; each test then waits for its own."""

    def __init__(self, base: Path, wanted: list[tuple[str, str]]) -> None:
        self.base = base
        self.pool = ThreadPoolExecutor(max_workers=WORKERS)
        self.futures: dict[tuple[str, str], Future[Outcome]] = {}
        for key in wanted:
            self.submit(key)

    def submit(self, key: tuple[str, str]) -> Future[Outcome]:
        if key not in self.futures:
            self.futures[key] = self.pool.submit(record, BY_NAME[key[0]], key[1], self.base)
        return self.futures[key]

    def outcome(self, name: str, fmt: str) -> Outcome:
        return self.submit((name, fmt)).result(timeout=240)


@pytest.fixture(scope="module")
def recorder(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Recorder]:
    wanted = [
        (item.callspec.params["name"], item.callspec.params["fmt"])
        for item in request.session.items
        if item.module is request.module and hasattr(item, "callspec")
    ]
    rec = Recorder(tmp_path_factory.mktemp("golden"), wanted)
    yield rec
    rec.pool.shutdown(cancel_futures=True)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", list(BY_NAME))
def test_golden(recorder: Recorder, name: str, fmt: str) -> None:
    actual = render(recorder.outcome(name, fmt))
    path = GOLDEN_DIR / f"{name}.{fmt}.txt"
    if UPDATE:
        GOLDEN_DIR.mkdir(exist_ok=True)
        path.write_bytes(actual.encode("utf-8"))
        return
    assert path.exists(), f"no golden file {path.name}: run with PERI_UPDATE_GOLDEN=1"
    assert actual == path.read_bytes().decode("utf-8")


def test_every_golden_file_belongs_to_a_session() -> None:
    expected = {f"{s.name}.{fmt}.txt" for s in SESSIONS for fmt in FORMATS}
    present = {p.name for p in GOLDEN_DIR.glob("*.txt")}
    assert present <= expected, sorted(present - expected)
