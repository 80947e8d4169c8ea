"""The pure parts of Full compact: the summary request, its reply, and the re-injected files."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from functools import cache
from importlib.resources import files
from pathlib import Path

from peri_cli.base.messages import (
    ImagePart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolUsePart,
    user_text,
)
from peri_cli.base.safe_read import SafeReadError, read_head
from peri_cli.context.micro import ORIGIN_SUMMARY, _json
from peri_cli.context.textcut import cut_middle
from peri_cli.context.viewrules import normalize
from peri_cli.session.transcript import MessageEntry
from peri_cli.session.turns import is_typed, origin_of

REINJECT_MAX_FILES = 5
REINJECT_FILE_MAX_TOKENS = 8_000
REINJECT_READ_BYTES = 1 << 20

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
    return (files("peri_cli.context") / "prompts" / "compact_summary.md").read_text("utf-8").strip()


# --- the summary request ----------------------------------------------------------------------


def _cap(text: str, chars: int | None, what: str) -> str:
    if chars is None or len(text) <= chars:
        return text
    return cut_middle(
        text, chars // 2, chars // 2, what=what, again="it is summarised here, not quoted"
    )


def _as_text(
    part: Part, result_chars: int | None, text_chars: int | None, file_texts: Collection[int]
) -> TextPart | None:
    """A part of the view as plain text, so the summary request carries no tool blocks.

    Tool inputs and results are cut to `result_chars` (they are summarised, not quoted: a 10 MB
    Write input must not become a 10 MB request), as are file contents an earlier compaction
    re-injected (text parts whose id is in `file_texts`); other text to `text_chars`."""
    if isinstance(part, TextPart) and id(part) in file_texts:
        text = _cap(part.text, result_chars, "these file contents")
        return part if text == part.text else TextPart(text=text)
    if isinstance(part, TextPart):
        text = _cap(part.text, text_chars, "this message")
        return part if text == part.text else TextPart(text=text)
    if isinstance(part, ThinkingPart):
        return None  # signed reasoning goes back whole or not at all
    if isinstance(part, ImagePart):
        return TextPart(text="[image]")
    if isinstance(part, ToolUsePart):
        args = _cap(_json(part.input), result_chars, "this tool input")
        return TextPart(text=f"[tool call {part.name}: {args}]")
    text = _cap(part.text or "(no text output)", result_chars, "this tool result")
    label = "tool error" if part.is_error else "tool result"
    return TextPart(text=f"[{label}]\n{text}")


def summary_messages(
    view: Sequence[Message],
    instruction: str,
    *,
    result_chars: int | None = None,
    text_chars: int | None = None,
    skip: int = 0,
    file_texts: Collection[int] = (),
) -> list[Message]:
    """The summary request's messages: the view as text (tool blocks rendered readably, reasoning
    left out), its first `skip` messages omitted, and the instruction as the last user message."""
    converted: list[Message] = []
    for message in view[skip:]:
        parts: list[Part] = []
        for p in message.content:
            t = _as_text(p, result_chars, text_chars, file_texts)
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


def continuation_text(summary: str, user_texts: str = "") -> str:
    """The message that stands for the excluded history: the summary, then the user's own words
    (`user_texts_block`), then how to carry on."""
    middle = f"\n\n{user_texts}" if user_texts else ""
    return f"{CONTINUATION_HEAD}\n\n<summary>\n{summary}\n</summary>{middle}\n\n{CONTINUATION_TAIL}"


# --- what the user typed, kept verbatim -------------------------------------------------------

USER_TEXTS_KEY = "user_texts"  # on a summary entry: the typed texts it carries, oldest first
USER_TEXTS_HEAD = (
    "What the user wrote before the compaction, word for word (oldest first). These are the "
    "user's own messages, not a summary: their facts, requests and instructions still hold."
)


def typed_texts(view_entries: Sequence[MessageEntry]) -> list[str]:
    """What the person typed in these entries, oldest first: their prompts, and the texts an
    earlier summary carried verbatim. Tool results, attachments, command output and compaction's
    own text are left out."""
    texts: list[str] = []
    for e in view_entries:
        if origin_of(e) == ORIGIN_SUMMARY:
            carried = (e.model_extra or {}).get(USER_TEXTS_KEY)
            if isinstance(carried, list):
                texts.extend(t for t in carried if isinstance(t, str) and t.strip())
        elif is_typed(e):
            text = "\n".join(p.text for p in e.message.content if isinstance(p, TextPart))
            if text.strip():
                texts.append(text)
    return texts


def keep_typed(texts: Sequence[str], *, budget: int, count: Callable[[str], int]) -> list[str]:
    """The newest texts that fit `budget` tokens, oldest first; the oldest one kept may be cut in
    its middle (with a marker) when it alone does not fit and at least 200 tokens are left."""
    kept: list[str] = []
    left = budget
    for text in reversed(texts):
        n = count(text)
        if n <= left:
            kept.append(text)
            left -= n
            continue
        if left >= 200:
            chars = int(len(text) * left / n * 0.9)
            kept.append(
                cut_middle(
                    text,
                    chars // 2,
                    chars // 2,
                    what="this message",
                    again="it was too long to keep whole",
                )
            )
        break
    kept.reverse()
    return kept


def user_texts_block(kept: Sequence[str], omitted: int) -> str:
    """The user's texts as they follow the summary."""
    if not kept:
        return ""
    blocks = "\n\n".join(f"<user_message>\n{t}\n</user_message>" for t in kept)
    note = (
        f"\n\n({omitted:,} older message{'s' if omitted != 1 else ''} of the user did not fit "
        "and are covered by the summary only.)"
        if omitted
        else ""
    )
    return f"{USER_TEXTS_HEAD}\n\n{blocks}{note}"


# --- what is re-injected ----------------------------------------------------------------------


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
    """A file's current text, line-numbered like Read; None if gone, unreadable, binary or not
    a regular file (through `safe_read`: a FIFO swapped in since the Read never blocks)."""
    try:
        data, clipped = read_head(path, REINJECT_READ_BYTES)
    except SafeReadError:
        return None
    if b"\0" in data[:8192]:
        return None
    text = _numbered(data.decode("utf-8", errors="replace"))
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
