"""Pure: transcript entries + projection directives -> the messages the model sees.

Stored messages are never changed. Directives (written by Micro compact as `ProjectionEntry`
lines) are applied to copies of just the messages they name, on every render, so a resumed session
renders exactly the view the last request carried. The directives themselves are in `directives`;
`project` checks the rendered view with `viewrules.validate_view` and falls back to the undirected
view if directives ever produced an invalid one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from peri_cli.base.messages import (
    ImagePart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)
from peri_cli.context.directives import (
    ATTACHED,
    ATTACHED_AGAIN,
    Directive,
    DropThinking,
    ElideInput,
    NoteResult,
    ReplaceImage,
    TruncateResult,
    TruncateText,
    active_directives,
)
from peri_cli.context.textcut import cut_middle
from peri_cli.context.viewrules import normalize, validate_view
from peri_cli.session.transcript import (
    ClearMarker,
    CompactBoundary,
    Entry,
    Interruption,
    MessageEntry,
    ProjectionEntry,
    Refusal,
    RewindMarker,
)

# The origin of a message the view holds in place of an `Interruption` (or a `Refusal`'s note).
ORIGIN_INTERRUPTION = "interruption"

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
    notes: dict[str, NoteResult] = field(default_factory=dict)

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
            elif isinstance(d, NoteResult):
                t.notes[d.tool_use_id] = d
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
        if isinstance(part, ToolResultPart) and part.tool_use_id in self.notes:
            # the second level wins over the first: the note replaces the cut text and images
            note = TextPart(text=self.notes[part.tool_use_id].note)
            return ToolResultPart(
                tool_use_id=part.tool_use_id, content=[note], is_error=part.is_error
            )
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
    just before the prompt it names (that prompt and what followed are hidden). A refusal leaves
    out the entries the refused request had added, its note (if any) in their place."""
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
        elif isinstance(entry, Refusal):
            left_out = set(entry.ids)
            visible = [e for e in visible if e.id not in left_out]
            if entry.text:
                visible.append(interruption_message(entry))
        elif isinstance(entry, ClearMarker):
            visible = []
        elif isinstance(entry, CompactBoundary):
            for i in range(len(visible) - 1, -1, -1):
                if visible[i].id == entry.summary_id:
                    visible = visible[i:]
                    break
    return visible


_notes: dict[str, MessageEntry] = {}


def interruption_message(entry: Interruption | Refusal) -> MessageEntry:
    """The note the model reads for an interruption or a refusal (one object per entry, so
    counts memoized by identity stay valid across requests)."""
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
