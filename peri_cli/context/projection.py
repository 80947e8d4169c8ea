"""Pure: transcript entries + projection directives -> the messages the model sees.

Stored messages are never changed. Directives (written by Micro compact as `ProjectionEntry`
lines) are applied to copies of just the messages they name, on every render, so a resumed session
renders exactly the view the last request carried. `validate_view` checks a rendered view against
the rules the provider APIs enforce; `project` falls back to the undirected view if directives ever
produced an invalid one.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from peri_cli.base.messages import (
    ImagePart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)
from peri_cli.session.transcript import (
    ClearMarker,
    CompactBoundary,
    Entry,
    Interruption,
    MessageEntry,
    ProjectionEntry,
    RewindMarker,
)

# The origin of a message the view holds in place of an `Interruption` entry.
ORIGIN_INTERRUPTION = "interruption"

# --- directives -----------------------------------------------------------------------------


class _Directive(BaseModel):
    """One change to the rendered copy of one stored message (`message_id` is its entry id)."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    message_id: str

    @property
    def key(self) -> str:
        """What the directive targets; a second directive with the same key is redundant."""
        raise NotImplementedError


class TruncateResult(_Directive):
    """Keep the first `head` and last `tail` characters of a tool result's text, with a marker."""

    kind: Literal["truncate_result"] = "truncate_result"
    tool_use_id: str
    head: int = Field(ge=0)
    tail: int = Field(ge=0)

    @property
    def key(self) -> str:
        return f"truncate_result:{self.message_id}:{self.tool_use_id}"


class ElideInput(_Directive):
    """Replace top-level values of a tool call's input with notes; the input stays an object."""

    kind: Literal["elide_input"] = "elide_input"
    tool_use_id: str
    fields: dict[str, str]  # input key -> the note shown instead of its value

    @property
    def key(self) -> str:
        return f"elide_input:{self.message_id}:{self.tool_use_id}"


class ReplaceImage(_Directive):
    """Show a placeholder text instead of an image (top level, or inside a tool result)."""

    kind: Literal["replace_image"] = "replace_image"
    index: int = Field(ge=0)  # position in the message content, or in the tool result's content
    tool_use_id: str | None = None
    placeholder: str = Field(min_length=1)

    @property
    def key(self) -> str:
        return f"replace_image:{self.message_id}:{self.tool_use_id or ''}:{self.index}"


ATTACHED = "this attached text"
ATTACHED_AGAIN = "read its source again if you need them"


class TruncateText(_Directive):
    """Keep the head and tail of a text part (an attached file, a `!` command's output), with a
    marker; used only on user messages that were not typed by the person."""

    kind: Literal["truncate_text"] = "truncate_text"
    index: int = Field(ge=0)
    head: int = Field(ge=0)
    tail: int = Field(ge=0)

    @property
    def key(self) -> str:
        return f"truncate_text:{self.message_id}:{self.index}"


class DropThinking(_Directive):
    """Leave a reasoning block out whole; signed blocks are never cut, only kept or dropped."""

    kind: Literal["drop_thinking"] = "drop_thinking"
    index: int = Field(ge=0)

    @property
    def key(self) -> str:
        return f"drop_thinking:{self.message_id}:{self.index}"


Directive = Annotated[
    TruncateResult | ElideInput | ReplaceImage | DropThinking | TruncateText,
    Field(discriminator="kind"),
]


@cache
def _directive_adapter() -> TypeAdapter[Directive]:
    return TypeAdapter(Directive)


def dump_directives(directives: Iterable[_Directive]) -> list[dict[str, Any]]:
    return [d.model_dump(mode="json") for d in directives]


def parse_directives(raw: Iterable[object]) -> list[Directive]:
    """Directives from their stored dicts; one this version does not understand is skipped."""
    parsed: list[Directive] = []
    for item in raw:
        try:
            parsed.append(_directive_adapter().validate_python(item))
        except ValidationError:
            continue
    return parsed


# ProjectionEntry lines are immutable, so their parsed directives are cached by entry id.
_PARSED_CACHE_MAX = 4096
_parsed: dict[tuple[str, int], tuple[Directive, ...]] = {}


def entry_directives(entry: ProjectionEntry) -> tuple[Directive, ...]:
    key = (entry.id, len(entry.directives))
    hit = _parsed.get(key)
    if hit is None:
        if len(_parsed) >= _PARSED_CACHE_MAX:
            _parsed.clear()
        hit = _parsed[key] = tuple(parse_directives(entry.directives))
    return hit


# --- cutting text safely ----------------------------------------------------------------------


def _joins_previous(ch: str) -> bool:
    """True for a character that continues the grapheme before it (never start a piece with it)."""
    o = ord(ch)
    return (
        o == 0x200D  # zero-width joiner
        or 0xFE00 <= o <= 0xFE0F  # variation selectors
        or 0x1F3FB <= o <= 0x1F3FF  # emoji skin-tone modifiers
        or 0xDC00 <= o <= 0xDFFF  # a low surrogate (lone surrogates from lax JSON)
        or 0xE0020 <= o <= 0xE007F  # emoji tag sequences
        or 0xE0100 <= o <= 0xE01EF  # variation selectors supplement
        or 0x1160 <= o <= 0x11FF  # Hangul medial vowels and final consonants (conjoining jamo)
        or unicodedata.category(ch) in ("Mn", "Mc", "Me")
    )


def _is_regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def is_boundary(text: str, i: int) -> bool:
    """Whether `text` may be cut before index `i` without splitting a character sequence."""
    if i <= 0 or i >= len(text):
        return True
    prev, cur = text[i - 1], text[i]
    if _joins_previous(cur) or prev == "\u200d" or 0xD800 <= ord(prev) <= 0xDBFF:
        return False
    if prev == "\r" and cur == "\n":
        return False
    if _is_regional(prev) and _is_regional(cur):
        run = 0
        while i - run - 1 >= 0 and _is_regional(text[i - run - 1]):
            run += 1
        return run % 2 == 0  # flags are pairs: cut only between two whole pairs
    return True


def _snap_back(text: str, i: int) -> int:
    while not is_boundary(text, i):
        i -= 1
    return i


def _snap_forward(text: str, i: int) -> int:
    while not is_boundary(text, i):
        i += 1
    return i


def cut_points(text: str, head: int, tail: int) -> tuple[int, int]:
    """Where to cut `text` to keep about `head` and `tail` characters: `text[end:start]` goes.

    Cuts prefer line ends near the limits and never split a surrogate pair, a combining sequence,
    an emoji ZWJ sequence, a flag or CRLF. Counts characters, not bytes.
    """
    if len(text) <= head + tail:
        return len(text), len(text)
    end = head
    newline = text.rfind("\n", head - head // 4, head)
    if head and newline > 0:
        end = newline + 1
    end = _snap_back(text, end)
    start = len(text) - tail
    newline = text.find("\n", start, start + tail // 4)
    if tail and newline >= 0:
        start = newline + 1
    return end, _snap_forward(text, max(start, end))


def cut_middle(
    text: str,
    head: int,
    tail: int,
    *,
    what: str = "this old tool result",
    again: str = "run the tool again if you need them",
) -> str:
    """`text` with its middle replaced by a marker saying how much was cut (see `cut_points`);
    text short enough to keep whole is returned unchanged."""
    end, start = cut_points(text, head, tail)
    cut = text[end:start]
    if not cut:
        return text
    lines = cut.count("\n")
    marker = (
        f"[… {len(cut):,} characters ({lines:,} lines) of {what} were cut by "
        f"context compaction; {again} …]"
    )
    before = text[:end]
    after = text[start:]
    sep_before = "" if not before or before.endswith("\n") else "\n"
    sep_after = "" if not after or after.startswith("\n") else "\n"
    return f"{before}{sep_before}{marker}{sep_after}{after}"


# --- rendering --------------------------------------------------------------------------------


def _render_result(
    part: ToolResultPart, trunc: TruncateResult | None, images: Mapping[int, ReplaceImage]
) -> ToolResultPart:
    content: list[TextPart | ImagePart] = []
    changed = False
    text_done = False
    for i, item in enumerate(part.content):
        if isinstance(item, ImagePart) and i in images:
            content.append(TextPart(text=images[i].placeholder))
            changed = True
        elif isinstance(item, TextPart) and trunc is not None:
            if text_done:
                continue  # all text parts were joined into the first one
            text_done = True
            cut = cut_middle(part.text, trunc.head, trunc.tail)
            changed = changed or cut != part.text
            content.append(TextPart(text=cut) if cut != item.text else item)
        else:
            content.append(item)
    if not changed:
        return part
    return ToolResultPart(tool_use_id=part.tool_use_id, content=content, is_error=part.is_error)


def _render_use(part: ToolUsePart, elide: ElideInput) -> ToolUsePart:
    new = {k: elide.fields.get(k, v) for k, v in part.input.items()}
    if new == part.input:
        return part
    return ToolUsePart(id=part.id, name=part.name, input=new)


@dataclass
class _ByTarget:
    """A message's directives, indexed by the part they apply to."""

    drop: set[int] = field(default_factory=set)
    texts: dict[int, TruncateText] = field(default_factory=dict)
    top_images: dict[int, ReplaceImage] = field(default_factory=dict)
    result_images: dict[str, dict[int, ReplaceImage]] = field(default_factory=dict)
    truncs: dict[str, TruncateResult] = field(default_factory=dict)
    elides: dict[str, ElideInput] = field(default_factory=dict)

    @classmethod
    def of(cls, directives: Sequence[Directive]) -> _ByTarget:
        t = cls()
        for d in directives:
            if isinstance(d, DropThinking):
                t.drop.add(d.index)
            elif isinstance(d, ReplaceImage):
                if d.tool_use_id is None:
                    t.top_images[d.index] = d
                else:
                    t.result_images.setdefault(d.tool_use_id, {})[d.index] = d
            elif isinstance(d, TruncateResult):
                t.truncs[d.tool_use_id] = d
            elif isinstance(d, TruncateText):
                t.texts[d.index] = d
            else:
                t.elides[d.tool_use_id] = d
        return t

    def apply(self, role: str, i: int, part: Part) -> Part | None:
        """The part as rendered (the same object when unchanged), or None when left out."""
        if isinstance(part, ThinkingPart) and i in self.drop:
            return None
        if isinstance(part, ImagePart) and i in self.top_images:
            return TextPart(text=self.top_images[i].placeholder)
        if isinstance(part, TextPart) and i in self.texts and role == "user":
            t = self.texts[i]
            cut = cut_middle(part.text, t.head, t.tail, what=ATTACHED, again=ATTACHED_AGAIN)
            return part if cut == part.text else TextPart(text=cut)
        if isinstance(part, ToolResultPart) and (
            part.tool_use_id in self.truncs or part.tool_use_id in self.result_images
        ):
            return _render_result(
                part,
                self.truncs.get(part.tool_use_id),
                self.result_images.get(part.tool_use_id, {}),
            )
        if isinstance(part, ToolUsePart) and part.id in self.elides:
            return _render_use(part, self.elides[part.id])
        return part


def render_message(message: Message, directives: Sequence[Directive]) -> Message:
    """A copy of `message` with `directives` applied, or `message` itself when nothing changes."""
    by_target = _ByTarget.of(directives)
    parts: list[Part] = []
    changed = False
    for i, part in enumerate(message.content):
        new = by_target.apply(message.role, i, part)
        if new is not part:
            changed = True
        if new is not None:
            parts.append(new)
    if not changed:
        return message
    return Message.model_construct(role=message.role, content=parts)


# Rendered copies are cached so an unchanged directed message is the same object every request
# (cheap, and token counts memoized by identity stay valid).
_RENDER_CACHE_MAX = 8192
_rendered: dict[tuple[str, tuple[str, ...]], tuple[Message, Message]] = {}


def _render_cached(entry: MessageEntry, directives: Sequence[Directive]) -> Message:
    key = (entry.id, tuple(d.key for d in directives))
    hit = _rendered.get(key)
    if hit is not None and hit[0] is entry.message:
        return hit[1]
    rendered = render_message(entry.message, directives)
    if len(_rendered) >= _RENDER_CACHE_MAX:
        _rendered.clear()
    _rendered[key] = (entry.message, rendered)
    return rendered


# --- the view ---------------------------------------------------------------------------------


def visible_entries(entries: Sequence[Entry]) -> list[MessageEntry]:
    """Message entries after the last /clear and not excluded by a Full-compact boundary; an
    interruption is a user-side note in their place. A /rewind brings back the view as it was
    just before the prompt it names (that prompt and what followed are hidden)."""
    visible: list[MessageEntry] = []
    positions: dict[str, int] | None = None
    for index, entry in enumerate(entries):
        if isinstance(entry, RewindMarker):
            if positions is None:
                positions = {e.id: i for i, e in enumerate(entries)}
            target = positions.get(entry.to)
            if target is not None and target < index:
                visible = visible_entries(entries[:target])
        elif isinstance(entry, MessageEntry):
            visible.append(entry)
        elif isinstance(entry, Interruption):
            visible.append(interruption_message(entry))
        elif isinstance(entry, ClearMarker):
            visible = []
        elif isinstance(entry, CompactBoundary):
            for i in range(len(visible) - 1, -1, -1):
                if visible[i].id == entry.summary_id:
                    visible = visible[i:]
                    break
    return visible


def active_directives(entries: Sequence[Entry]) -> dict[str, list[Directive]]:
    """Every recorded directive, by the id of the message it applies to (the first one per key)."""
    by_message: dict[str, list[Directive]] = {}
    seen: set[str] = set()
    for entry in entries:
        if isinstance(entry, ProjectionEntry):
            for d in entry_directives(entry):
                if d.key not in seen:
                    seen.add(d.key)
                    by_message.setdefault(d.message_id, []).append(d)
    return by_message


_notes: dict[str, MessageEntry] = {}


def interruption_message(entry: Interruption) -> MessageEntry:
    """The note the model reads for an interruption (one object per entry, so counts memoized by
    identity stay valid across requests)."""
    note = _notes.get(entry.id)
    if note is None:
        note = _notes[entry.id] = MessageEntry.model_validate(
            {
                "id": entry.id,
                "ts": entry.ts,
                "message": Message(role="user", content=[TextPart(text=entry.text)]),
                "origin": ORIGIN_INTERRUPTION,
            }
        )
    return note


CACHE_MARK_KEY = "cache_mark"  # on a ProjectionEntry: the last view message it left unchanged


def cache_marks(entries: Sequence[Entry]) -> tuple[int, ...]:
    """Where the view is worth a prompt-cache breakpoint besides its end: the last message the
    most recent Micro compaction left unchanged (a /clear or Full since then changed all)."""
    for entry in reversed(entries):
        if isinstance(entry, ClearMarker | CompactBoundary | RewindMarker):
            return ()
        if isinstance(entry, ProjectionEntry):
            mark = (entry.model_extra or {}).get(CACHE_MARK_KEY)
            return (mark,) if isinstance(mark, int) and mark >= 0 else ()
    return ()


def render(
    visible: Sequence[MessageEntry], directives: Mapping[str, Sequence[Directive]]
) -> list[Message]:
    """The visible messages with their directives applied (not yet normalized)."""
    out: list[Message] = []
    for entry in visible:
        ds = directives.get(entry.id)
        out.append(_render_cached(entry, ds) if ds else entry.message)
    return out


def _blank(part: Part) -> bool:
    """A text block with nothing but whitespace: the Anthropic API rejects it, so it never goes."""
    return isinstance(part, TextPart) and not part.text.strip()


def normalize(messages: list[Message]) -> list[Message]:
    """Make a history the APIs accept: user first, roles alternating, every tool_use answered,
    no blank text blocks.

    A user prompt committed before a failed turn leaves two user messages in a row; they merge.
    A tool_use whose results never landed (a torn write) is dropped, as is an orphan tool_result.
    A message left with nothing (say a reply that was only "\n\n") is dropped and its neighbours
    merge. Messages that need no change are passed through as the same objects.
    """
    paired: list[Message] = []
    for i, original in enumerate(messages):
        message = original
        keep: list[Part] | None = None
        if message.role == "assistant" and message.tool_uses:
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            answered = {r.tool_use_id for r in nxt.tool_results} if nxt else set()
            keep = [
                p for p in message.content if not isinstance(p, ToolUsePart) or p.id in answered
            ]
        elif message.role == "user" and message.tool_results:
            prev = paired[-1] if paired else None
            asked = {u.id for u in prev.tool_uses} if prev and prev.role == "assistant" else set()
            keep = [
                p
                for p in message.content
                if not isinstance(p, ToolResultPart) or p.tool_use_id in asked
            ]
        if any(_blank(p) for p in (keep if keep is not None else message.content)):
            keep = [p for p in (keep if keep is not None else message.content) if not _blank(p)]
        if keep is not None and len(keep) != len(message.content):
            message = Message.model_construct(role=message.role, content=keep)
        if not message.content:
            continue
        if paired and paired[-1].role == message.role:
            merged = [*paired[-1].content, *message.content]
            paired[-1] = Message.model_construct(role=message.role, content=merged)
        else:
            paired.append(message)
    while paired and paired[0].role != "user":
        paired.pop(0)
    return paired


def project(entries: Sequence[Entry]) -> list[Message]:
    """The model's view: visible messages, directives applied on copies, normalized.

    Should the directives ever render an invalid view, the view without them is used instead:
    a bigger request beats one the provider rejects.
    """
    visible = visible_entries(entries)
    directives = active_directives(entries)
    if not any(e.id in directives for e in visible):
        return normalize([e.message for e in visible])
    view = normalize(render(visible, directives))
    originals = [e.message for e in visible]
    # Directives change parts of the messages they touch, so only those need part checks.
    stored = {id(m) for m in originals}
    changed = {i for i, m in enumerate(view) if id(m) not in stored}
    if validate_view(view, originals=originals, only_parts_of=changed):
        plain = normalize(originals)
        if not validate_view(plain):  # the directives are to blame, so leave them out
            return plain
    return view


# --- validation -------------------------------------------------------------------------------


def _signed(messages: Iterable[Message]) -> set[tuple[str, str, bool]]:
    return {
        (p.signature or "", p.thinking, p.redacted)
        for m in messages
        for p in m.content
        if isinstance(p, ThinkingPart) and (p.signature or p.redacted)
    }


def _check_part(role: str, part: Part, signed: set[tuple[str, str, bool]] | None) -> str | None:
    """What is wrong with one part, or None; the caller adds where it is (only when needed)."""
    if isinstance(part, TextPart):
        return None if part.text.strip() else "empty or whitespace-only text block"
    if isinstance(part, ToolUsePart):
        if role != "assistant":
            return f"tool_use in a {role} message"
        if not isinstance(part.input, dict) or not all(isinstance(k, str) for k in part.input):
            return f"tool_use {part.id} input is not a JSON object"
        return None
    if isinstance(part, ToolResultPart):
        return None if role == "user" else f"tool_result in a {role} message"
    if isinstance(part, ThinkingPart):
        if role != "assistant":
            return f"thinking in a {role} message"
        is_signed = bool(part.signature) or part.redacted
        key = (part.signature or "", part.thinking, part.redacted)
        if is_signed and signed is not None and key not in signed:
            return "signed thinking block differs from the one the provider sent"
        return None
    return None if role == "user" else f"image in a {role} message"


def validate_view(
    messages: Sequence[Message],
    *,
    originals: Sequence[Message] | None = None,
    only_parts_of: Collection[int] | None = None,
) -> list[str]:
    """Problems that would make a provider reject the view (empty list: valid).

    Checks: user first, roles alternating, no empty message or text block, every tool_use answered
    by a tool_result in the next message and no orphan results, unique tool_use ids, tool inputs
    that are JSON objects, parts in the role that may carry them, and, when `originals` are given,
    that every signed thinking block is byte-identical to one of theirs. `only_parts_of` limits
    the per-part checks to those message indexes (the structure is always checked in full).
    """
    problems: list[str] = []
    if messages and messages[0].role != "user":
        problems.append("messages[0]: the view must start with a user message")
    signed = _signed(originals) if originals is not None else None
    pending: list[str] = []
    seen: set[str] = set()
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if i and message.role == messages[i - 1].role:
            problems.append(f"{where}: two {message.role} messages in a row")
        if not message.content:
            problems.append(f"{where}: empty message")
        if only_parts_of is None or i in only_parts_of:
            for j, part in enumerate(message.content):
                problem = _check_part(message.role, part, signed)
                if problem:
                    problems.append(f"{where}.content[{j}]: {problem}")
        results = [p.tool_use_id for p in message.content if isinstance(p, ToolResultPart)]
        if message.role == "user":
            orphans = [r for r in results if r not in pending]
            missing = [t for t in pending if t not in results]
            if orphans:
                problems.append(f"{where}: tool_result without a tool_use: {', '.join(orphans)}")
            if missing:
                problems.append(f"messages[{i - 1}]: tool_use not answered: {', '.join(missing)}")
            pending = []
        else:
            if pending:
                problems.append(f"messages[{i - 1}]: tool_use not answered: {', '.join(pending)}")
            pending = [p.id for p in message.content if isinstance(p, ToolUsePart)]
            dupes = [u for u in pending if u in seen]
            if dupes:
                problems.append(f"{where}: duplicate tool_use id: {', '.join(dupes)}")
            seen.update(pending)
    if pending:
        problems.append(
            f"messages[{len(messages) - 1}]: tool_use not answered: {', '.join(pending)}"
        )
    return problems
