"""The base rules of the model view: clear markers, boundaries, and an API-valid shape."""

from peri_cli.base.messages import Message, TextPart, ToolUsePart, tool_result, user_text
from peri_cli.context.projection import project
from peri_cli.context.viewrules import normalize
from peri_cli.session.transcript import ClearMarker, CompactBoundary, MessageEntry


def entry(message: Message) -> MessageEntry:
    return MessageEntry(message=message)


def assistant(text: str, *uses: ToolUsePart) -> Message:
    return Message(role="assistant", content=[TextPart(text=text), *uses])


def use(i: str) -> ToolUsePart:
    return ToolUsePart(id=i, name="Read", input={"file_path": "a"})


def results(*ids: str) -> Message:
    return Message(role="user", content=[tool_result(i, "x") for i in ids])


def test_clear_marker_starts_an_empty_view() -> None:
    entries = [
        entry(user_text("old")),
        entry(assistant("a")),
        ClearMarker(),
        entry(user_text("new")),
    ]
    assert [m.text for m in project(entries)] == ["new"]


def test_boundary_excludes_everything_before_the_summary() -> None:
    summary = entry(user_text("summary"))
    entries = [
        entry(user_text("old")),
        entry(assistant("a")),
        summary,
        CompactBoundary(summary_id=summary.id),
        entry(assistant("after")),
    ]
    assert [m.text for m in project(entries)] == ["summary", "after"]


def test_consecutive_user_messages_merge() -> None:
    view = normalize([user_text("a"), user_text("b"), assistant("c")])
    assert [m.role for m in view] == ["user", "assistant"]
    assert [p.text for p in view[0].content] == ["a", "b"]


def test_unanswered_tool_use_and_orphan_result_are_dropped() -> None:
    view = normalize([user_text("go"), assistant("t", use("1"), use("2")), results("1", "9")])
    assert [u.id for u in view[1].tool_uses] == ["1"]
    assert [r.tool_use_id for r in view[2].tool_results] == ["1"]


def test_view_starts_with_a_user_message() -> None:
    assert normalize([assistant("x"), user_text("y")])[0].role == "user"
