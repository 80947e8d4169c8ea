"""The pure parts of Full compact: what was read and which skills were used."""

from __future__ import annotations

from peri_cli.core.messages import Message, ToolUsePart, tool_result, user_text
from peri_cli.core.projection import TruncateResult, visible_entries
from peri_cli.core.summary import files_read, skills_used
from tests.core.builders import assistant, entry, read_use, results


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
