"""Issue 13's long sessions end to end: the real `peri` process against the fake Anthropic server
with its prompt-cache accounting on (Anthropic's rules: tools -> system -> messages prefix,
`cache_control` breakpoints, reads 0.1x, writes 1.25x)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from peri_cli.base.messages import (
    Message,
    TextPart,
    ToolUsePart,
    Usage,
    tool_result,
    user_text,
)
from peri_cli.context.micro import COMPACTION_ORIGINS
from peri_cli.context.projection import project
from peri_cli.context.tokens import TokenCounter
from peri_cli.providers.anthropic.request import convert_messages
from peri_cli.session.transcript import Entry, MessageEntry, dump_entry
from peri_cli.session.transcript_file import load
from peri_cli.session.turns import origin_of
from tests.e2e.conftest import Peri
from tests.fakeserver import PromptCache

MARKER = "cut by context compaction"
NOTE = "moved out of view by context compaction"
FACT = "The release codename is TANGERINE-42."
SUMMARY = (
    "<summary>Goal: read the modules one by one and report on them. Done: the modules so far. "
    "Next: the remaining ones.</summary>"
)


def module_text(n: int, tokens: int) -> str:
    """A code-like file whose Read result is about `tokens` tokens as the fake server counts them
    (JSON characters / 4)."""
    lines = [f'"""Module {n}."""']
    k = 0
    while sum(len(line) + 9 for line in lines) < tokens * 3.6:
        lines.append(f"def handler_{n}_{k}(request): return request.get('f{k}', {k * n % 97})")
        k += 1
    return "\n".join(lines) + "\n"


class Reader:
    """Replies by request: a summary to a tool-less request, else the next Read of this turn's
    files, one call per reply, then a short answer."""

    def __init__(self) -> None:
        self.pending: list[str] = []

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        if not body.get("tools"):
            return {"text": SUMMARY}
        if self.pending:
            return {"tool_calls": [{"name": "Read", "input": {"file_path": self.pending.pop(0)}}]}
        return {"text": "Read them; the handlers follow the usual pattern."}


@dataclass
class Session:
    """One session driven through successive `peri -p` runs (the first creates it, each later one
    resumes it), recording every model call's body and the usage the server reported."""

    peri: Peri
    reader: Reader
    session_id: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    def turn(self, prompt: str, files: list[str]) -> None:
        self.reader.pending = list(files)
        seen = len(self.peri.server.requests)
        args = ["-p", prompt, "--output-format", "stream-json"]
        if self.session_id:
            args += ["-r", self.session_id]
        done = self.peri.run(*args)
        assert done.returncode == 0, done.stderr
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        for line in lines:
            if line.get("type") == "system" and line.get("subtype") == "init":
                self.session_id = line["session_id"]
        self.events += [line for line in lines if line["type"] == "compact"]
        self.calls += [
            r
            for r in self.peri.server.requests[seen:]
            if r["path"] == "/v1/messages" and r["status"] == 200
        ]

    @property
    def conversation(self) -> list[dict[str, Any]]:
        """The calls that carry the conversation (Full's summary requests have no tools)."""
        return [c for c in self.calls if c["body"].get("tools")]

    def cost(self) -> float:
        """Cost-weighted input over every request: uncached + 1.25 x writes + 0.1 x reads."""
        return sum(
            u["input_tokens"]
            + 1.25 * u["cache_creation_input_tokens"]
            + 0.1 * u["cache_read_input_tokens"]
            for u in (c["usage"] for c in self.calls)
        )

    def stable_share(self) -> float:
        """Cache reads / all input, over every request after the first."""
        later = [c["usage"] for c in self.calls[1:]]
        reads = sum(u["cache_read_input_tokens"] for u in later)
        return reads / sum(
            u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
            for u in later
        )

    def largest(self) -> int:
        """The largest request as the server counted it (all of its input)."""
        return max(
            c["usage"]["input_tokens"]
            + c["usage"]["cache_read_input_tokens"]
            + c["usage"]["cache_creation_input_tokens"]
            for c in self.calls
        )


def uncompacted_cost(peri: Peri, session: Session) -> tuple[float, int]:
    """Cost-weighted input of the same session without compaction, and its largest request.

    Replayed from the transcript, which keeps every message: the requests compaction-off Peri
    sends (after each prompt and each tool result, the whole history so far, converted by the
    Anthropic provider) priced by a fresh fake-server prompt cache. Cheaper than running 24 more
    processes, and the same requests (same tool ids, same system and tools)."""
    assert session.session_id is not None
    record = load(peri.transcript(session.session_id)).entries
    originals: list[Entry] = [
        e for e in record if isinstance(e, MessageEntry) and origin_of(e) not in COMPACTION_ORIGINS
    ]
    template = session.conversation[0]["body"]
    cache = PromptCache(enabled=True)
    cost, largest = 0.0, 0
    for i, entry in enumerate(originals):
        assert isinstance(entry, MessageEntry)
        if entry.message.role != "user":
            continue
        body = {**template, "messages": convert_messages(project(originals[: i + 1]))}
        u = cache.usage(body)
        cost += (
            u["input_tokens"]
            + 1.25 * u["cache_creation_input_tokens"]
            + 0.1 * u["cache_read_input_tokens"]
        )
        largest = max(largest, sum(u.values()))
    return cost, largest


def results_of(body: dict[str, Any]) -> list[str]:
    """The text of every tool result in a request, oldest first."""
    out: list[str] = []
    for message in body["messages"]:
        for block in message["content"]:
            if block["type"] == "tool_result":
                out.append("".join(c.get("text", "") for c in block.get("content") or []))
    return out


def setup(peri: Peri, window: int, files: int, tokens: int) -> Reader:
    for n in range(files):
        (peri.workspace / f"module_{n}.py").write_text(module_text(n, tokens))
    peri.extra_env["PERI_CONTEXT_WINDOW"] = str(window)
    reader = Reader()
    peri.server.set_responder(reader)
    peri.server.set_cache(True)
    return reader


def call_tokens(call: dict[str, Any]) -> int:
    """All of a request's input, as the fake server counted it."""
    u = call["usage"]
    return u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]


def originals_by_file(peri: Peri, session_id: str) -> dict[str, str]:
    """The text of every Read result in the transcript, by the file it read."""
    record = load(peri.transcript(session_id)).entries
    paths: dict[str, str] = {}
    texts: dict[str, str] = {}
    for e in record:
        if isinstance(e, MessageEntry):
            for use in e.message.tool_uses:
                paths[use.id] = str(use.input.get("file_path"))
            for result in e.message.tool_results:
                texts[paths[result.tool_use_id]] = result.text
    return texts


def one_long_turn(peri: Peri, reads: int) -> Session:
    """One prompt, then `reads` Reads of ~2k-token files one after another, in a 30,000 window;
    checks what every long turn must hold and returns the session for more."""
    window = 30_000
    reader = setup(peri, window, reads, 2_000)
    session = Session(peri, reader)
    session.turn("Read every module and report.", [f"module_{n}.py" for n in range(reads)])
    assert len(session.calls) == reads + 1
    assert not [e for e in session.events if e["strategy"] in ("full", "failed")]
    micro = [e for e in session.events if e["strategy"] == "micro"]
    assert micro, session.events
    sizes = [call_tokens(c) for c in session.calls]
    print(f"{reads} reads: first request {sizes[0]:,}, largest {max(sizes):,} tokens")
    assert max(sizes) < window  # every request, as the server counted it
    last = results_of(session.calls[-1]["body"])
    assert len(last) == reads  # every call is still there, each with its result
    newest = f"def handler_{reads - 1}_"
    assert MARKER not in last[-1] and NOTE not in last[-1] and newest in last[-1]
    # The older results are shortened: notes (oldest), then cut stubs, then the newest whole.
    kinds = ["note" if NOTE in r else "cut" if MARKER in r else "whole" for r in last]
    assert kinds == sorted(kinds, key=["note", "cut", "whole"].index), kinds
    assert kinds[-3:] == ["whole"] * 3, kinds  # the newest three are protected
    counter = TokenCounter(encoding_path=None)
    for n, (kind, text) in enumerate(zip(kinds, last, strict=True)):
        if kind == "note":
            assert f"Read(module_{n}.py)" in text and counter.count_text(text) <= 40, text
    for event in micro:  # each says what it freed and how much of the cached prefix changed
        assert event["tokens_after"] < event["tokens_before"]
        assert "freed" in event["detail"] and "prefix changed" in event["detail"]
    # The transcript keeps the original text of every result.
    assert session.session_id is not None
    originals = originals_by_file(peri, session.session_id)
    for n in range(reads):
        lines = module_text(n, 2_000).splitlines()
        assert all(line in originals[f"module_{n}.py"] for line in lines), n
    return session


@pytest.mark.timeout(120)
def test_one_prompt_and_36_reads_stay_under_the_window_without_a_full_summary(peri: Peri) -> None:
    session = one_long_turn(peri, 36)
    last = results_of(session.calls[-1]["body"])
    assert all(MARKER in r or NOTE in r for r in last[:20])  # older ones shortened


@pytest.mark.timeout(300)
def test_one_prompt_and_100_reads_stay_under_the_window_without_a_full_summary(
    peri: Peri,
) -> None:
    """A turn of 100 calls fits a 30,000-token window with no summary.

    The arithmetic, in the fake server's tokens (JSON characters / 4), from this test's last
    request: the fixed part (system prompt, tool schemas, request fields) is 3,641 tokens, the
    prompt 22. A Read of a ~2k-token file costs ~1,906 tokens whole (call and result), ~99 as a
    call beside its one-line note. After a Micro step at the Full threshold (95% = 28,500) the
    request holds 3,641 + 22 + 96 x 99 (9,504: every older call with its note) + 4 x 1,906
    (7,624: the protected newest results, whole) = ~20,800; each further call adds ~1,906, so the
    next step comes about four calls later and no request passes ~27,600. The floor grows by
    ~99 tokens a call: (28,500 - 3,663 - 7,624) / 99, about 170 calls, would still fit before Full.
    """
    session = one_long_turn(peri, 100)
    last = results_of(session.calls[-1]["body"])
    assert sum(NOTE in r for r in last) >= 80  # most of the turn is notes by now


@pytest.mark.timeout(300)
def test_24_turns_keep_the_users_fact_fit_the_window_and_cost_less(peri: Peri) -> None:
    window, turns, reads = 24_000, 24, 4
    reader = setup(peri, window, turns * reads, 1_200)
    session = Session(peri, reader)
    for t in range(turns):
        files = [f"module_{t * reads + i}.py" for i in range(reads)]
        prompt = f"Turn {t}: read {', '.join(files)} one by one and report."
        session.turn(f"{FACT} Keep it in mind. {prompt}" if t == 0 else prompt, files)
    baseline, baseline_largest = uncompacted_cost(peri, session)
    assert baseline_largest > 4 * window  # the session really outgrows the window
    assert session.largest() < window
    assert "TANGERINE-42" in json.dumps(session.conversation[-1]["body"]["messages"])
    ratio = session.cost() / baseline
    share = session.stable_share()
    print(f"cost-weighted input {ratio:.3f}x of the uncompacted session; stable prefix {share:.1%}")
    assert ratio <= 0.45
    assert share >= 0.85


def append_history(path: Path, turns: int, usage: Usage | None) -> int:
    """Append `turns` old turns (prompt, Read, result, answer) to a closed session file, their
    replies with `usage` (None, or the zeros a provider that reports none used to leave); returns
    the number of messages added."""
    lines: list[str] = []
    for n in range(turns):
        call = ToolUsePart(id=f"toolu_old_{n:05d}", name="Read", input={"file_path": f"f{n}.py"})
        body = "".join(f"{k:>6}\tvalue_{n}_{k} = compute({k}, {n})\n" for k in range(12))
        for message in (
            user_text(f"Old task {n}: look at f{n}.py"),
            Message(role="assistant", content=[call]),
            Message(role="user", content=[tool_result(call.id, body)]),
            Message(role="assistant", content=[TextPart(text=f"f{n}.py computes values.")]),
        ):
            reply = message.role == "assistant"
            lines.append(dump_entry(MessageEntry(message=message, usage=usage if reply else None)))
    with path.open("a", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))
    return 4 * turns


@pytest.mark.timeout(180)
@pytest.mark.parametrize("usage", [None, Usage()], ids=["no-usage", "zero-usage"])
def test_item_21_resuming_10000_messages_compacts_before_the_first_request(
    peri: Peri, usage: Usage | None
) -> None:
    window = 100_000
    peri.extra_env["PERI_CONTEXT_WINDOW"] = str(window)
    peri.server.set_responder(Reader())
    first = peri.json("-p", "Remember: the answer is 42.")
    assert not first["is_error"], first
    session_id = first["session_id"]
    assert append_history(peri.transcript(session_id), 2_500, usage) == 10_000
    seen = len(peri.server.requests)
    done = peri.json("-p", "What now?", "-r", session_id)
    assert not done["is_error"], done
    calls = [r for r in peri.server.requests[seen:] if r["status"] == 200]
    assert calls, peri.server.requests[seen:]
    for call in calls:  # the summary request and the turn's own request both fit
        tokens = len(json.dumps(call["body"])) // 4
        assert tokens < window, (tokens, len(call["body"]["messages"]))
    turn = calls[-1]["body"]
    assert turn.get("tools") and len(turn["messages"]) < 100
    text = json.dumps(turn["messages"])
    assert "What now?" in text  # the prompt just sent, verbatim after the summary
