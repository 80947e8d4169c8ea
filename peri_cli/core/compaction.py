"""Compaction: pressure on the window, the pure Micro planner, and the Compactor (Micro and Full).

Nothing here edits a stored message. Micro appends a `ProjectionEntry` of directives that
`projection.project` applies to copies on every request; Full appends a summary message, a
`CompactBoundary` that excludes everything before it, and a message re-injecting the current
content of files that were read. A pressure sample (one provider usage report plus what was added
since) drives at most one automatic compaction, so Micro and Full cannot alternate on stale data.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from peri_cli.core.events import (
    Compacted,
    CompactFailed,
    CompactWarning,
    Event,
    TurnEnded,
)
from peri_cli.core.messages import (
    ImagePart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    dump_message,
    user_text,
)
from peri_cli.core.models import context_window
from peri_cli.core.projection import (
    Directive,
    DropThinking,
    ElideInput,
    ReplaceImage,
    TruncateResult,
    active_directives,
    cut_middle,
    dump_directives,
    normalize,
    project,
    render_message,
    visible_entries,
)
from peri_cli.core.provider import MessageCompleted, ModelRequest, ProviderError
from peri_cli.core.retry import Retrying, stream_with_retries
from peri_cli.core.tokens import (
    IMAGE_TOKENS_MAX,
    RATIO_MAX,
    TokenCounter,
    default_counter,
    estimate_tokens,
)
from peri_cli.core.transcript import (
    ClearMarker,
    CompactBoundary,
    Entry,
    MessageEntry,
    ProjectionEntry,
)

if TYPE_CHECKING:
    from peri_cli.core.loop import Agent
    from peri_cli.core.settings import Settings

# Micro frees down to this share of its threshold, so it does not fire (and move the cached
# prefix) again on the very next turn.
MICRO_TARGET = 0.8
WARN_MARGIN = 0.05  # warn when pressure is this close below the Full threshold
MIN_CUT_CHARS = 400  # a cut must remove at least this much to be worth a directive
MIN_SAVING_TOKENS = 16
SUMMARY_ATTEMPTS = 3  # one try plus two retries of an empty summary
STALL_LIMIT = 2  # automatic Full compactions in a row that stay over the threshold

REINJECT_MAX_FILES = 5
REINJECT_MAX_TOKENS = 20_000
REINJECT_WINDOW_SHARE = 0.10
REINJECT_FILE_MAX_TOKENS = 8_000
REINJECT_READ_BYTES = 1 << 20

# Tools whose input is file content: elide it with a note that says so, keep the path.
FILE_CHANGING_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
# Input keys that identify what a call was about; kept whole however long they are.
KEEP_INPUT_KEYS = frozenset(
    {
        "file_path",
        "path",
        "notebook_path",
        "pattern",
        "name",
        "description",
        "subagent_type",
        "tool_name",
        "glob",
        "url",
        "offset",
        "limit",
    }
)

ORIGIN_SUMMARY = "compact_summary"
ORIGIN_REINJECT = "compact_reinject"

CONTINUATION_HEAD = (
    "This session continues from an earlier conversation that was compacted to free context. "
    "The summary below covers the earlier part (the full record stays in the session file)."
)
CONTINUATION_TAIL = (
    "Continue the work from where it left off without asking the user to repeat anything. "
    "If a task was in progress, carry on with it; re-read task records and the files you are "
    "about to change before editing them."
)


@cache
def summary_instruction() -> str:
    return (files("peri_cli.core") / "prompts" / "compact_summary.md").read_text("utf-8").strip()


# --- configuration ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CompactConfig:
    micro_threshold: float = 0.75
    full_threshold: float = 0.95
    protected_turns: int = 3
    keep_chars: int = 200
    disable_compact: bool = False  # no automatic compaction at all; /compact still works
    disable_auto_compact: bool = False  # no automatic Full; Micro still runs
    context_window: int | None = None  # override of the model's known window
    warn_margin: float = WARN_MARGIN

    @classmethod
    def from_settings(cls, settings: Settings) -> CompactConfig:
        """From resolved settings (env and COMPACT_THRESHOLD already applied).

        `smart_compact_enabled` is a legacy switch that meant "Micro": Micro is always on unless
        compaction is disabled, so it changes nothing here.
        """
        c = settings.compact
        return cls(
            micro_threshold=c.micro_compact_threshold,
            full_threshold=c.auto_compact_threshold,
            protected_turns=c.protected_turns,
            keep_chars=c.tool_result_keep_chars,
            disable_compact=settings.disable_compact,
            disable_auto_compact=settings.disable_auto_compact,
            context_window=settings.context_window,
        )


# --- pressure ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pressure:
    """How full the next request will make the window.

    `key` names the sample: the assistant entry whose provider usage it starts from and the last
    message since. A compaction that adds no message keeps the key; new model output changes it.
    """

    tokens: int
    window: int
    key: tuple[str, str]
    from_usage: bool

    @property
    def ratio(self) -> float:
        return self.tokens / self.window if self.window else 0.0


def _last_usage(entries: Sequence[Entry]) -> int | None:
    """Index of the last assistant entry with usage that still describes the current history."""
    for i in range(len(entries) - 1, -1, -1):
        e = entries[i]
        if isinstance(e, ClearMarker | CompactBoundary):
            return None  # a usage report from before these describes a different history
        if isinstance(e, MessageEntry) and e.message.role == "assistant" and e.usage is not None:
            return i
    return None


def measure_pressure(
    entries: Sequence[Entry],
    *,
    window: int,
    base_tokens: int,
    count_messages: Callable[[Sequence[Message]], int],
) -> Pressure:
    """Pure: pressure from the entries alone, so it is the same after a resume.

    With a usage report: its prompt tokens (cache reads and writes included) plus its output,
    plus an estimate of the messages appended since, minus what Micro directives recorded since
    have freed. Without one (a new session, or history changed by /clear or Full since): the
    estimate of the whole request, `base_tokens` (system and tool schemas) included.
    """
    last_message = next((e.id for e in reversed(entries) if isinstance(e, MessageEntry)), "")
    i = _last_usage(entries)
    if i is not None:
        entry = entries[i]
        assert isinstance(entry, MessageEntry) and entry.usage is not None
        tokens = entry.usage.prompt_tokens + entry.usage.output_tokens
        added: list[Message] = []
        for e in entries[i + 1 :]:
            if isinstance(e, MessageEntry):
                added.append(e.message)
            elif isinstance(e, ProjectionEntry):
                if e.tokens_before is None or e.tokens_after is None:
                    break  # freed an unknown amount: estimate instead
                tokens -= e.tokens_before - e.tokens_after
        else:
            tokens += count_messages(added)
            return Pressure(max(0, tokens), window, (entry.id, last_message), True)
    tokens = base_tokens + count_messages(project(entries))
    return Pressure(tokens, window, ("", last_message), False)


def token_bound(messages: Sequence[Message]) -> int:
    """A cheap upper bound of what the counter can say `messages` cost: a token never covers less
    than one UTF-8 byte, and calibration scales by at most RATIO_MAX. Needs no tokenizer."""
    total = 0
    for m in messages:
        total += len(json.dumps(dump_message(m), ensure_ascii=False).encode())
        for part in m.content:
            inner = part.content if isinstance(part, ToolResultPart) else [part]
            total += IMAGE_TOKENS_MAX * sum(isinstance(p, ImagePart) for p in inner)
    return int(total * RATIO_MAX)


# --- the Micro planner ------------------------------------------------------------------------


def _origin(entry: MessageEntry) -> str | None:
    extra = entry.model_extra or {}
    origin = extra.get("origin")
    return origin if isinstance(origin, str) else None


def is_human_turn(entry: MessageEntry) -> bool:
    """A user message with text from a person: not tool results, not a compaction's own message."""
    m = entry.message
    return (
        m.role == "user"
        and any(isinstance(p, TextPart) for p in m.content)
        and not m.tool_results
        and _origin(entry) not in (ORIGIN_SUMMARY, ORIGIN_REINJECT)
    )


def protected_start(view_entries: Sequence[MessageEntry], keep_turns: int) -> int:
    """Index of the first entry of the last `keep_turns` user turns (len when keep_turns is 0)."""
    if keep_turns <= 0:
        return len(view_entries)
    seen = 0
    for i in range(len(view_entries) - 1, -1, -1):
        if is_human_turn(view_entries[i]):
            seen += 1
            if seen == keep_turns:
                return i
    return 0  # fewer turns than that: everything is protected


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def elide_note(tool: str, key: str, value: object, file_path: object) -> str:
    size = len(value) if isinstance(value, str) else len(_json(value))
    note = f"[{size:,} characters elided from this old tool call by context compaction"
    if tool in FILE_CHANGING_TOOLS:
        where = f" {file_path}" if isinstance(file_path, str) else " the file"
        return (
            f"{note}; the tool received the full text. This note is not file content: "
            f"Read{where} to see what it holds now.]"
        )
    return note + "]"


def _plan_input(
    message_id: str, use: ToolUsePart, keep_chars: int
) -> tuple[ElideInput | None, dict[str, Any]]:
    fields: dict[str, str] = {}
    cut = 0
    for key, value in use.input.items():
        if key in KEEP_INPUT_KEYS and isinstance(value, str | int | float | bool):
            continue
        size = len(value) if isinstance(value, str) else len(_json(value))
        if isinstance(value, str | dict | list) and size > keep_chars:
            note = elide_note(use.name, key, value, use.input.get("file_path"))
            if len(note) < size:
                fields[key] = note
                cut += size - len(note)
    if cut < MIN_CUT_CHARS:
        return None, use.input
    new = {k: fields.get(k, v) for k, v in use.input.items()}
    return ElideInput(message_id=message_id, tool_use_id=use.id, fields=fields), new


def _image_placeholder(image: ImagePart) -> str:
    kb = len(image.data) * 3 // 4 // 1024
    return f"[image omitted by context compaction: {image.media_type}, about {kb:,} KB]"


def _candidates(
    entry: MessageEntry, keep_chars: int, count: Callable[[str], int]
) -> list[tuple[Directive, int]]:
    """Every directive worth making for one message, with its estimated saving in tokens."""
    out: list[tuple[Directive, int]] = []
    mid = entry.id
    for i, part in enumerate(entry.message.content):
        if isinstance(part, ThinkingPart):
            saving = count(part.thinking) + 4
            out.append((DropThinking(message_id=mid, index=i), saving))
        elif isinstance(part, ImagePart):
            placeholder = _image_placeholder(part)
            saving = 1000 - count(placeholder)  # images cost ~1,000+ tokens; not worth decoding
            out.append((ReplaceImage(message_id=mid, index=i, placeholder=placeholder), saving))
        elif isinstance(part, ToolUsePart):
            directive, new = _plan_input(mid, part, keep_chars)
            if directive is not None:
                out.append((directive, count(_json(part.input)) - count(_json(new))))
        elif isinstance(part, ToolResultPart):
            text = part.text
            if len(text) > 2 * keep_chars + MIN_CUT_CHARS:
                d = TruncateResult(
                    message_id=mid, tool_use_id=part.tool_use_id, head=keep_chars, tail=keep_chars
                )
                out.append((d, count(text) - count(cut_middle(text, keep_chars, keep_chars))))
            for j, item in enumerate(part.content):
                if isinstance(item, ImagePart):
                    placeholder = _image_placeholder(item)
                    d2 = ReplaceImage(
                        message_id=mid,
                        index=j,
                        tool_use_id=part.tool_use_id,
                        placeholder=placeholder,
                    )
                    out.append((d2, 1000 - count(placeholder)))
    return out


def plan_micro(
    view_entries: Sequence[MessageEntry],
    need_to_free: int,
    *,
    keep_turns: int = 3,
    keep_chars: int = 200,
    already: Collection[str] = (),
    count: Callable[[str], int] = estimate_tokens,
) -> list[Directive]:
    """Pure: directives that free about `need_to_free` tokens from turns older than the last
    `keep_turns` user turns, oldest first.

    Long tool results keep `keep_chars` of head and tail around a marker; large tool inputs keep
    their keys and small fields, with notes for the big values (file-changing tools say the
    content was elided, never passing a note off as file content); images become placeholders;
    reasoning blocks are dropped whole. Parts are never removed from a tool_use/tool_result pair,
    so pairing always holds. `already` holds the keys of directives in force, which are skipped.
    """
    if need_to_free <= 0:
        return []
    stop = protected_start(view_entries, keep_turns)
    planned: list[Directive] = []
    freed = 0
    for entry in view_entries[:stop]:
        for directive, saving in _candidates(entry, keep_chars, count):
            if directive.key in already or saving < MIN_SAVING_TOKENS:
                continue
            planned.append(directive)
            freed += saving
            if freed >= need_to_free:
                return planned
    return planned


# --- Full compact: the summary request --------------------------------------------------------


def _as_text(part: Part, result_chars: int | None) -> TextPart | None:
    """A part of the view as plain text, so the summary request carries no tool blocks."""
    if isinstance(part, TextPart):
        return part
    if isinstance(part, ThinkingPart):
        return None  # signed reasoning goes back whole or not at all
    if isinstance(part, ImagePart):
        return TextPart(text="[image]")
    if isinstance(part, ToolUsePart):
        args = _json(part.input)
        if result_chars is not None:
            args = cut_middle(args, result_chars // 2, result_chars // 2)
        return TextPart(text=f"[tool call {part.name}: {args}]")
    text = part.text or "(no text output)"
    if result_chars is not None:
        text = cut_middle(text, result_chars // 2, result_chars // 2)
    label = "tool error" if part.is_error else "tool result"
    return TextPart(text=f"[{label}]\n{text}")


def summary_messages(
    view: Sequence[Message], instruction: str, *, result_chars: int | None = None, skip: int = 0
) -> list[Message]:
    """The summary request's messages: the view as text (tool blocks rendered readably, reasoning
    left out), its first `skip` messages omitted, and the instruction as the last user message."""
    converted: list[Message] = []
    for message in view[skip:]:
        parts: list[Part] = []
        for p in message.content:
            t = _as_text(p, result_chars)
            if t is not None:
                parts.append(t)
        if parts:
            converted.append(Message(role=message.role, content=parts))
    if skip:
        converted.insert(0, user_text("[The earliest part of the conversation is left out here.]"))
    ask = TextPart(text=instruction)
    out = normalize(converted)
    if out and out[-1].role == "user":
        out[-1] = Message(role="user", content=[*out[-1].content, ask])
    else:
        out.append(Message(role="user", content=[ask]))
    return out


def extract_summary(text: str) -> str:
    """The text inside <summary>...</summary> when present, else the whole reply, stripped."""
    start = text.find("<summary>")
    if start >= 0:
        body = text[start + len("<summary>") :]
        end = body.find("</summary>")
        return (body if end < 0 else body[:end]).strip()
    return text.strip()


def instruction_for(focus: str | None) -> str:
    text = summary_instruction()
    if focus and focus.strip():
        text += (
            "\n\nThe user asked the summary to focus on: "
            f"{focus.strip()}\nGive that the most detail; keep the other sections brief."
        )
    return text


def continuation_text(summary: str) -> str:
    return f"{CONTINUATION_HEAD}\n\n<summary>\n{summary}\n</summary>\n\n{CONTINUATION_TAIL}"


# --- Full compact: what is re-injected --------------------------------------------------------


def files_read(view_entries: Sequence[MessageEntry]) -> list[str]:
    """Paths the model read successfully in these entries, most recent first, each once."""
    ok: dict[str, bool] = {}
    for e in view_entries:
        for r in e.message.tool_results:
            ok[r.tool_use_id] = not r.is_error
    paths: list[str] = []
    for e in reversed(view_entries):
        for use in reversed(e.message.tool_uses):
            path = use.input.get("file_path")
            fresh = isinstance(path, str) and path not in paths
            if use.name == "Read" and ok.get(use.id) and fresh:
                paths.append(str(path))
    return paths


def skills_used(view_entries: Sequence[MessageEntry]) -> list[str]:
    names: list[str] = []
    for e in view_entries:
        for use in e.message.tool_uses:
            name = use.input.get("name")
            if use.name == "Skill" and isinstance(name, str) and name not in names:
                names.append(name)
    return names


def _numbered(text: str) -> str:
    return "".join(f"{n:>6}\t{line}\n" for n, line in enumerate(text.splitlines(), start=1))


def read_current(path: Path) -> str | None:
    """A file's current text, line-numbered like Read; None if gone, unreadable or binary."""
    try:
        with path.open("rb") as f:
            data = f.read(REINJECT_READ_BYTES + 1)
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    clipped = len(data) > REINJECT_READ_BYTES
    text = _numbered(data[:REINJECT_READ_BYTES].decode("utf-8", errors="replace"))
    return text + ("(file continues)\n" if clipped else "")


def _fit(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """`text` cut (at a line end) to about `max_tokens`, with a note when cut."""
    tokens = count(text)
    if tokens <= max_tokens:
        return text
    chars = int(len(text) * max_tokens / tokens * 0.95)
    end = text.rfind("\n", 0, chars) + 1 or chars
    return text[:end] + "[… the rest of this file is left out; Read it for more …]\n"


def reinjection_text(
    contents: Sequence[tuple[str, str]],
    skills: Sequence[str],
    *,
    budget: int,
    count: Callable[[str], int],
) -> str:
    """The message after a summary: current file contents (within `budget` tokens) and skills."""
    blocks: list[str] = []
    left = budget
    for path, text in contents[:REINJECT_MAX_FILES]:
        if left < 200:
            break
        fitted = _fit(text, min(left, REINJECT_FILE_MAX_TOKENS), count)
        blocks.append(f'<file path="{path}">\n{fitted}</file>')
        left -= count(fitted)
    parts: list[str] = []
    if blocks:
        parts.append(
            "Files read before the compaction, with their current content (read a file again "
            "before editing it if you need the exact text of a part left out):\n\n"
            + "\n\n".join(blocks)
        )
    if skills:
        parts.append(
            f"Skills in use before the compaction: {', '.join(skills)}. Load a skill again with "
            "the Skill tool when you need its instructions."
        )
    return "\n\n".join(parts)


# --- the Compactor ----------------------------------------------------------------------------


def _base_texts(request: ModelRequest) -> tuple[str, str, str]:
    """What a request carries besides its messages: system prompt parts and tool schemas."""
    tools = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in request.tools
    ]
    return request.frozen_system, request.dynamic_system, _json(tools) if tools else ""


@dataclass(frozen=True)
class _MicroPlan:
    directives: list[Directive]
    freed: int  # tokens, measured by rendering the affected messages before and after
    changed: int  # messages whose rendered copy changes


@dataclass
class _Outcome:
    ok: bool = False
    tokens_after: int | None = None


class Compactor:
    """The Compact phase of the loop: measures pressure, runs Micro and Full, reports events.

    `before_request(agent)` runs before every model call; `compact_now(agent, focus)` is
    `/compact [focus]`. Both are async generators of events and never edit a stored message.
    """

    def __init__(
        self,
        config: CompactConfig | None = None,
        *,
        counter: TokenCounter | None = None,
        summary_attempts: int = SUMMARY_ATTEMPTS,
    ) -> None:
        self.config = config or CompactConfig()
        self.counter = counter or default_counter()
        self.summary_attempts = summary_attempts
        self._last_key: tuple[str, str] | None = None  # the sample last acted on
        self._calibrated: str | None = None  # usage entry id last used for calibration
        self._warned = False
        self._stalls = 0  # automatic Full compactions in a row that stayed over the threshold
        self._raw_texts: dict[str, int] = {}

    # measuring

    def window(self, agent: Agent) -> int:
        return context_window(agent.model, self.config.context_window)

    def _raw_text(self, text: str) -> int:
        n = self._raw_texts.get(text)
        if n is None:
            if len(self._raw_texts) > 64:
                self._raw_texts.clear()
            n = self._raw_texts[text] = self.counter.raw_text(text)
        return n

    def base_tokens(self, request: ModelRequest) -> int:
        """System prompt and tool schemas of a request, as the counter sees them."""
        raw = sum(self._raw_text(t) for t in _base_texts(request))
        return round(raw * self.counter.ratio)

    def request_tokens(self, request: ModelRequest) -> int:
        return self.base_tokens(request) + self.counter.count_messages(request.messages)

    def clearly_below(self, agent: Agent, request: ModelRequest, ratio: float) -> bool:
        """Whether pressure is surely under `ratio`, judged without a tokenizer (so a short
        session never pays for loading one)."""
        base = sum(len(t.encode()) for t in _base_texts(request))
        bound = measure_pressure(
            agent.session.entries,
            window=self.window(agent),
            base_tokens=int(base * RATIO_MAX),
            count_messages=token_bound,
        )
        return bound.ratio < ratio

    def pressure(self, agent: Agent, request: ModelRequest | None = None) -> Pressure:
        """The pressure the next request (`request`, or the one the agent would build now) puts
        on the window, calibrating the counter first."""
        entries = agent.session.entries
        request = request or agent.build_request()
        self._calibrate(entries, request)
        return measure_pressure(
            entries,
            window=self.window(agent),
            base_tokens=self.base_tokens(request),
            count_messages=self.counter.count_messages,
        )

    def _calibrate(self, entries: Sequence[Entry], request: ModelRequest) -> None:
        """Fit the counter to the provider: estimate the request behind the last usage report."""
        i = _last_usage(entries)
        if i is None:
            return
        entry = entries[i]
        assert isinstance(entry, MessageEntry) and entry.usage is not None
        if entry.id == self._calibrated or entry.usage.prompt_tokens <= 0:
            return
        self._calibrated = entry.id
        sent = project(entries[:i])
        estimated = self.base_tokens(request) + self.counter.count_messages(sent)
        self.counter.calibrate(estimated, entry.usage.prompt_tokens)

    # the Compact phase

    async def before_request(self, agent: Agent) -> AsyncIterator[Event]:
        """Micro when pressure passes its threshold, Full when Micro cannot get under the Full
        threshold; at most one automatic decision per pressure sample."""
        cfg = self.config
        if cfg.disable_compact:
            return
        lowest = min(cfg.micro_threshold, cfg.full_threshold - cfg.warn_margin)
        request = agent.build_request()
        if self.clearly_below(agent, request, lowest):
            self._warned, self._stalls = False, 0
            return
        sample = self.pressure(agent, request)
        if sample.key == self._last_key:
            return  # this sample has been acted on already
        self._last_key = sample.key
        tokens, window = sample.tokens, sample.window
        auto_full = not cfg.disable_auto_compact
        if sample.ratio < cfg.full_threshold:
            self._stalls = 0
        plan = self._plan(agent, tokens, window) if sample.ratio >= cfg.micro_threshold else None
        # Micro alone when it gets under the Full threshold (or Full is off); else Full instead.
        if plan is not None and (
            not auto_full or (tokens - plan.freed) / window < cfg.full_threshold
        ):
            compacted = self._commit_micro(agent, plan, tokens)
            tokens = compacted.tokens_after if compacted.tokens_after is not None else tokens
            self._warned = False
            yield compacted
        ratio = tokens / window
        if not auto_full:
            return
        if ratio < cfg.full_threshold - cfg.warn_margin:
            self._warned = False
        elif not self._warned:
            self._warned = True
            yield CompactWarning(ratio, cfg.full_threshold)
        if ratio >= cfg.full_threshold:
            async for event in self._auto_full(agent, tokens):
                yield event

    async def _auto_full(self, agent: Agent, tokens: int) -> AsyncIterator[Event]:
        cfg = self.config
        while True:
            outcome = _Outcome()
            async for event in self._full(agent, None, tokens, outcome):
                yield event
            if not outcome.ok:
                return  # reported as CompactFailed; history untouched
            self._warned = False
            sample = self.pressure(agent)
            self._last_key = sample.key
            if sample.ratio < cfg.full_threshold:
                self._stalls = 0
                return
            self._stalls += 1
            if self._stalls >= STALL_LIMIT:
                yield TurnEnded(
                    "compact_stalled",
                    f"the context is still {sample.ratio:.0%} full after {self._stalls} "
                    f"compactions in a row (threshold {cfg.full_threshold:.0%} of "
                    f"{sample.window:,} tokens): the system prompt, tool schemas and the latest "
                    "messages alone are too big. Use /clear, or a model with a larger window.",
                )
                return
            tokens = sample.tokens

    async def compact_now(self, agent: Agent, focus: str | None = None) -> AsyncIterator[Event]:
        """`/compact [focus]`: a Full compact now, whatever the pressure and settings."""
        outcome = _Outcome()
        async for event in self._full(agent, focus, self.pressure(agent).tokens, outcome):
            yield event
        if outcome.ok:
            self._warned = False

    # Micro

    def _plan(self, agent: Agent, tokens: int, window: int) -> _MicroPlan | None:
        """Directives that would bring pressure under the Micro target; None if nothing helps."""
        cfg = self.config
        entries = agent.session.entries
        target = int(cfg.micro_threshold * MICRO_TARGET * window)
        already = {d.key for ds in active_directives(entries).values() for d in ds}
        directives = plan_micro(
            visible_entries(entries),
            tokens - target,
            keep_turns=cfg.protected_turns,
            keep_chars=cfg.keep_chars,
            already=already,
            count=self.counter.count_text,
        )
        if not directives:
            return None
        freed, changed = self._freed(entries, directives)
        return _MicroPlan(directives, freed, changed) if changed else None

    def _freed(self, entries: Sequence[Entry], new: Sequence[Directive]) -> tuple[int, int]:
        """Tokens freed by adding `new` to the directives in force, and messages changed."""
        current = active_directives(entries)
        by_id = {e.id: e for e in visible_entries(entries)}
        freed = changed = 0
        for mid in dict.fromkeys(d.message_id for d in new):
            entry = by_id.get(mid)
            if entry is None:
                continue
            old_ds = current.get(mid, [])
            keys = {d.key for d in old_ds}
            added = [d for d in new if d.message_id == mid and d.key not in keys]
            before = render_message(entry.message, old_ds)
            after = render_message(entry.message, [*old_ds, *added])
            if after != before:
                changed += 1
                freed += self.counter.count_message(before) - self.counter.count_message(after)
        return freed, changed

    def _commit_micro(self, agent: Agent, plan: _MicroPlan, tokens: int) -> Compacted:
        after = tokens - plan.freed
        agent.session.append(
            ProjectionEntry(
                directives=dump_directives(plan.directives),
                tokens_before=tokens,
                tokens_after=after,
            )
        )
        kinds = sorted({d.kind for d in plan.directives})
        detail = f"{len(plan.directives)} directives: {', '.join(kinds)}"
        return Compacted("micro", tokens, after, plan.changed, detail=detail)

    # Full

    def _summary_request(self, agent: Agent, focus: str | None) -> ModelRequest:
        """The tool-less summary request, shrunk (results cut, oldest messages left out) to fit."""
        window = self.window(agent)
        base = agent.build_request(tools=False)
        max_out = min(agent.max_tokens, max(512, window // 4))
        budget = int((window - max_out) * 0.95)
        view = base.messages
        instruction = instruction_for(focus)
        fixed = self.base_tokens(base)
        attempt = base
        for cap in (None, 8_000, 2_000, 500):
            attempt = self._summary_attempt(base, view, instruction, max_out, cap=cap)
            if fixed + self.counter.count_messages(attempt.messages) <= budget:
                return attempt
        skip = 0
        while skip < len(view) - 1:  # results are as short as they get: leave out the oldest
            skip += max(1, (len(view) - skip) // 2)
            attempt = self._summary_attempt(base, view, instruction, max_out, cap=500, skip=skip)
            if fixed + self.counter.count_messages(attempt.messages) <= budget:
                break
        return attempt

    @staticmethod
    def _summary_attempt(
        base: ModelRequest,
        view: Sequence[Message],
        instruction: str,
        max_out: int,
        *,
        cap: int | None,
        skip: int = 0,
    ) -> ModelRequest:
        messages = summary_messages(view, instruction, result_chars=cap, skip=skip)
        return dataclasses.replace(base, messages=messages, tools=[], max_tokens=max_out)

    async def _summarize(
        self, agent: Agent, request: ModelRequest, failure: list[str]
    ) -> AsyncIterator[Event | str]:
        """Yield retry events and finally the summary text; on failure append why to `failure`."""
        for _ in range(self.summary_attempts):
            completed: MessageCompleted | None = None
            try:
                async for event in stream_with_retries(agent.provider, request):
                    if isinstance(event, MessageCompleted):
                        completed = event
                    elif isinstance(event, Retrying):
                        yield event
            except ProviderError as e:
                failure.append(f"the summary request failed: {e}")
                return
            if completed is None:
                failure.append("the summary request ended without a reply")
                return
            agent.usage_total = agent.usage_total + completed.usage
            if completed.stop_reason != "end_turn":
                failure.append(
                    f"the summary did not finish normally (stop reason {completed.stop_reason})"
                )
                return
            summary = extract_summary(completed.message.text)
            if summary:
                yield summary
                return
        failure.append(f"the model returned an empty summary {self.summary_attempts} times")

    def _reinjection(self, agent: Agent, excluded: Sequence[MessageEntry]) -> tuple[str, int]:
        window = self.window(agent)
        budget = min(REINJECT_MAX_TOKENS, int(window * REINJECT_WINDOW_SHARE))
        contents: list[tuple[str, str]] = []
        for path in files_read(excluded)[:REINJECT_MAX_FILES]:
            text = read_current(agent.tool_ctx.resolve(path))
            if text is not None:
                contents.append((path, text or "(the file is empty)\n"))
        text = reinjection_text(
            contents, skills_used(excluded), budget=budget, count=self.counter.count_text
        )
        return text, text.count('<file path="')

    async def _full(
        self, agent: Agent, focus: str | None, tokens_before: int | None, outcome: _Outcome
    ) -> AsyncIterator[Event]:
        """Summarize the visible history and commit summary, boundary and re-injection together,
        or change nothing and yield CompactFailed."""
        entries = list(agent.session.entries)
        excluded = visible_entries(entries)
        if not excluded:
            yield CompactFailed("nothing to compact: the visible history is empty")
            return
        request = self._summary_request(agent, focus)
        failure: list[str] = []
        summary = ""
        async for item in self._summarize(agent, request, failure):
            if isinstance(item, str):
                summary = item
            else:
                yield item
        if not summary:
            yield CompactFailed(failure[0] if failure else "no summary")
            return
        summary_entry = MessageEntry.model_validate(
            {"message": user_text(continuation_text(summary)), "origin": ORIGIN_SUMMARY}
        )
        boundary = CompactBoundary(
            summary_id=summary_entry.id,
            focus=focus or None,
            tokens_before=tokens_before,
            excluded_messages=len(excluded),
        )
        added: list[Entry] = [summary_entry, boundary]
        text, n_files = self._reinjection(agent, excluded)
        if text:
            added.append(
                MessageEntry.model_validate({"message": user_text(text), "origin": ORIGIN_REINJECT})
            )
        after_view = project([*entries, *added])
        tokens_after = self.base_tokens(agent.build_request()) + self.counter.count_messages(
            after_view
        )
        added[1] = boundary.model_copy(update={"tokens_after": tokens_after})
        agent.session.append(*added)
        outcome.ok, outcome.tokens_after = True, tokens_after
        detail = f"summarized {len(excluded)} messages"
        if n_files:
            detail += f"; re-injected {n_files} file{'s' if n_files > 1 else ''}"
        if focus:
            detail += f"; focus: {focus}"
        yield Compacted("full", tokens_before, tokens_after, len(excluded), detail=detail)
