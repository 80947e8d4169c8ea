"""The pure parts of Full compact: what was read and which skills were used."""

from __future__ import annotations

from peri_cli.core.messages import Message, Part, ToolUsePart, Usage, tool_result, user_text
from peri_cli.core.projection import TruncateResult, visible_entries
from peri_cli.core.summary import files_read, skills_used
from peri_cli.core.transcript import MessageEntry


def entry(message: Message, usage: Usage | None = None) -> MessageEntry:
    return MessageEntry(message=message, usage=usage)


def assistant(*parts: Part) -> Message:
    return Message(role="assistant", content=list(parts))


def read_use(i: str, path: str = "a.py") -> ToolUsePart:
    return ToolUsePart(id=i, name="Read", input={"file_path": path})


def results(i: str, text: str, *, is_error: bool = False) -> Message:
    return Message(role="user", content=[tool_result(i, text, is_error=is_error)])


def test_helpers_find_reads_and_skills() -> None:
    entries = [
        entry(user_text("x")),
        entry(
            assistant(
                read_use("1", "a.py"),
                read_use("2", "b.py"),
                ToolUsePart(id="3", name="Skill", input={"name": "pdf"}),
            )
        ),
        entry(
            Message(
                role="user",
                content=[
                    tool_result("1", "a"),
                    tool_result("2", "err", is_error=True),
                    tool_result("3", "s"),
                ],
            )
        ),
        entry(assistant(read_use("4", "c.py"))),
        entry(results("4", "c")),
    ]
    assert files_read(entries) == ["c.py", "a.py"]
    assert skills_used(entries) == ["pdf"]
    assert visible_entries(entries) == entries
    assert TruncateResult(message_id="m", tool_use_id="t", head=1, tail=1).key.startswith("trunc")
