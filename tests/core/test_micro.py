"""The pure Micro planner on synthetic transcripts."""

from __future__ import annotations

from peri_cli.core.messages import (
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    tool_result,
    user_text,
)
from peri_cli.core.micro import plan_micro, protected_start
from peri_cli.core.projection import (
    DropThinking,
    ElideInput,
    ReplaceImage,
    dump_directives,
    project,
    render_message,
    validate_view,
)
from peri_cli.core.transcript import MessageEntry, ProjectionEntry
from tests.core.builders import assistant, entry, read_use, results, turn

PNG = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def test_protected_turns_count_only_messages_from_a_person() -> None:
    entries = [*turn(1), *turn(2), *turn(3)]
    assert protected_start(entries, 3) == 0
    assert protected_start(entries, 2) == 4  # tool results are not turns
    assert protected_start(entries, 1) == 8
    assert protected_start(entries, 0) == len(entries)


def test_planner_never_touches_the_protected_turns() -> None:
    entries = [*turn(1), *turn(2), *turn(3), *turn(4)]
    planned = plan_micro(entries, 10**9, keep_turns=3, keep_chars=200)
    assert planned and {d.message_id for d in planned} <= {e.id for e in entries[:4]}
    assert plan_micro(entries[4:], 10**9, keep_turns=3, keep_chars=200) == []


def test_planner_truncates_long_results_and_stops_when_enough_is_freed() -> None:
    entries = [t for n in range(1, 7) for t in turn(n, result_chars=8000)]
    everything = plan_micro(entries, 10**9, keep_turns=3, keep_chars=200)
    assert [d.kind for d in everything] == ["truncate_result"] * 3
    one = plan_micro(entries, 10, keep_turns=3, keep_chars=200)
    assert len(one) == 1 and one[0] == everything[0]  # oldest first
    assert plan_micro(entries, 0, keep_turns=3) == []
    already = {d.key for d in everything}
    assert plan_micro(entries, 10**9, keep_turns=3, already=already) == []


def test_short_results_are_left_alone() -> None:
    entries = [*turn(1, result_chars=300), *turn(2), *turn(3), *turn(4)]
    assert plan_micro(entries, 10**9, keep_turns=3, keep_chars=200) == []


def test_file_changing_inputs_keep_the_path_and_say_the_content_was_elided() -> None:
    content = "print('hello')\n" * 400
    write = ToolUsePart(id="w", name="Write", input={"file_path": "app.py", "content": content})
    edit = ToolUsePart(
        id="e",
        name="Edit",
        input={"file_path": "app.py", "old_string": "x" * 900, "new_string": "y" * 900},
    )
    bash = ToolUsePart(id="b", name="Bash", input={"command": "echo " + "z" * 2000, "timeout": 5})
    old = [
        entry(user_text("write it")),
        entry(assistant(write, edit, bash)),
        entry(
            Message(
                role="user",
                content=[tool_result("w", "ok"), tool_result("e", "ok"), tool_result("b", "z")],
            )
        ),
    ]
    entries = [*old, *turn(2), *turn(3), *turn(4)]
    planned = plan_micro(entries, 10**9, keep_turns=3, keep_chars=200)
    elides = {d.tool_use_id: d for d in planned if isinstance(d, ElideInput)}
    assert set(elides) == {"w", "e", "b"}
    view = project([*entries, ProjectionEntry(directives=dump_directives(planned))])
    uses = {u.id: u.input for u in view[1].tool_uses}
    assert uses["w"]["file_path"] == "app.py"
    assert "not file content" in uses["w"]["content"] and "Read app.py" in uses["w"]["content"]
    assert "elided" in uses["e"]["old_string"] and "elided" in uses["e"]["new_string"]
    assert uses["b"]["timeout"] == 5 and "elided" in uses["b"]["command"]
    assert all(isinstance(inp, dict) for inp in uses.values())
    assert write.input["content"] == content  # the stored call is untouched


def test_old_images_and_thinking_go_recent_ones_stay() -> None:
    def image_turn(n: int) -> list[MessageEntry]:
        return [
            entry(
                Message(
                    role="user",
                    content=[
                        TextPart(text=f"see {n}"),
                        ImagePart(media_type="image/png", data=PNG),
                    ],
                )
            ),
            entry(
                assistant(
                    ThinkingPart(thinking="let me think " * 50, signature=f"sig{n}"),
                    TextPart(text="seen"),
                )
            ),
        ]

    entries = [*image_turn(1), *image_turn(2), *image_turn(3), *image_turn(4)]
    planned = plan_micro(entries, 10**9, keep_turns=3, keep_chars=200)
    assert {type(d) for d in planned} == {ReplaceImage, DropThinking}
    assert {d.message_id for d in planned} == {entries[0].id, entries[1].id}
    view = project([*entries, ProjectionEntry(directives=dump_directives(planned))])
    assert "image omitted" in view[0].content[1].text  # type: ignore[union-attr]
    assert view[1].content == [TextPart(text="seen")]
    assert isinstance(view[3].content[0], ThinkingPart)  # protected
    assert validate_view(view) == []


def test_images_inside_tool_results_become_placeholders() -> None:
    shot = Message(
        role="user",
        content=[
            ToolResultPart(
                tool_use_id="t1",
                content=[TextPart(text="image:"), ImagePart(media_type="image/png", data=PNG)],
            )
        ],
    )
    entries = [
        entry(user_text("look")),
        entry(assistant(read_use("t1", "shot.png"))),
        entry(shot),
        *turn(2),
        *turn(3),
        *turn(4),
    ]
    planned = plan_micro(entries, 10**9, keep_turns=3)
    assert [(type(d), getattr(d, "tool_use_id", None)) for d in planned] == [(ReplaceImage, "t1")]
    rendered = render_message(shot, planned)
    assert not any(isinstance(p, ImagePart) for p in rendered.tool_results[0].content)


def test_cjk_results_are_cut_by_characters_and_stay_valid_utf8() -> None:
    body = "压缩不修改原始消息正文，只在副本上投影。" * 400
    entries = [
        entry(user_text("读一下")),
        entry(assistant(read_use("t1"))),
        entry(results("t1", body)),
        *turn(2),
        *turn(3),
        *turn(4),
    ]
    planned = plan_micro(entries, 10**9, keep_turns=3, keep_chars=100)
    assert [d.kind for d in planned] == ["truncate_result"]
    text = render_message(entries[2].message, planned).tool_results[0].text
    assert text.startswith(body[:90]) and text.endswith(body[-90:])
    assert "characters" in text and len(text) < 500
    text.encode("utf-8")
