"""Projection directives: what Micro compact records (in `ProjectionEntry` lines) to shorten a
message in the view, how they are stored and read back, and which are in force. Pure data: the
rendering that applies them lives in `projection`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from peri_cli.session.transcript import Entry, ProjectionEntry


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


class NoteResult(_Directive):
    """Show a one-line note instead of a whole tool result (Micro's second level, for results
    already cut when cutting is not enough). The note is stored, not rebuilt, so the rendered
    message stays byte-identical on every request and the cached prefix holds."""

    kind: Literal["note_result"] = "note_result"
    tool_use_id: str
    note: str = Field(min_length=1)

    @property
    def key(self) -> str:
        return f"note_result:{self.message_id}:{self.tool_use_id}"


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
    TruncateResult | ElideInput | ReplaceImage | DropThinking | TruncateText | NoteResult,
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
