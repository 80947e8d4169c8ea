"""Small transcript builders shared by the compaction tests."""

from __future__ import annotations

from peri_cli.base.messages import (
    Message,
    Part,
    TextPart,
    ToolUsePart,
    Usage,
    tool_result,
    user_text,
)
from peri_cli.context.tokens import TokenCounter
from peri_cli.session.transcript import MessageEntry


def entry(message: Message, usage: Usage | None = None) -> MessageEntry:
    return MessageEntry(message=message, usage=usage)


def assistant(*parts: Part) -> Message:
    return Message(role="assistant", content=list(parts))


def read_use(i: str, path: str = "a.py") -> ToolUsePart:
    return ToolUsePart(id=i, name="Read", input={"file_path": path})


def results(i: str, text: str, *, is_error: bool = False) -> Message:
    return Message(role="user", content=[tool_result(i, text, is_error=is_error)])


def turn(n: int, result_chars: int = 4000, usage: Usage | None = None) -> list[MessageEntry]:
    """One user turn: a prompt, a Read and its long result, a final answer."""
    body = "".join(f"{n}:{k} some output of the tool\n" for k in range(result_chars // 28 + 1))
    return [
        entry(user_text(f"task {n}")),
        entry(assistant(TextPart(text="reading"), read_use(f"t{n}", f"f{n}.py"))),
        entry(results(f"t{n}", body[:result_chars])),
        entry(assistant(TextPart(text=f"done {n}")), usage),
    ]


def counter() -> TokenCounter:
    """An estimate-only counter: deterministic and never loads the encoding."""
    return TokenCounter(encoding_path=None)


def long_turn(
    reads: int, result_chars: int = 4000, prompt: str = "read them all", ids: str = "r"
) -> list[MessageEntry]:
    """One user prompt followed by `reads` Reads one after another, each with a long result;
    tool ids are `ids` + the read's number."""
    out = [entry(user_text(prompt))]
    for k in range(reads):
        body = "".join(f"{k}:{j} some output of the tool\n" for j in range(result_chars // 28 + 1))
        out.append(entry(assistant(read_use(f"{ids}{k}", f"f{k}.py"))))
        out.append(entry(results(f"{ids}{k}", body[:result_chars])))
    return out


def attached(text: str, origin: str = "attachment") -> MessageEntry:
    """A user-side message that the person did not type (an @-attachment, a `!` command)."""
    return MessageEntry.model_validate({"message": user_text(text), "origin": origin})
