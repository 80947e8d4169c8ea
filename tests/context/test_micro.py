"""The pure Micro planner on synthetic transcripts."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from peri_cli.base.messages import (
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    tool_result,
    user_text,
)
from peri_cli.context.directives import (
    Directive,
    DropThinking,
    ElideInput,
    ReplaceImage,
    TruncateResult,
    TruncateText,
    active_directives,
    dump_directives,
)
from peri_cli.context.estimate import estimate_tokens
from peri_cli.context.micro import Unit, collect_units, plan_micro, protected_keys, protected_start
from peri_cli.context.projection import project, render_message, visible_entries
from peri_cli.context.viewrules import validate_view
from peri_cli.session.transcript import Entry, MessageEntry, ProjectionEntry
from tests.builders import (
    assistant,
    attached,
    counter,
    entry,
    long_turn,
    read_use,
    results,
    turn,
)
from tests.context.test_projection import transcripts

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


# --- protection by budget (issue 13) -------------------------------------------------------------


def kept_whole(entries: list[MessageEntry], planned: list[Directive]) -> list[str]:
    """Tool ids whose results no directive touches, oldest first."""
    touched = {d.tool_use_id for d in planned if isinstance(d, TruncateResult)}
    return [
        r.tool_use_id
        for e in entries
        for r in e.message.tool_results
        if r.tool_use_id not in touched
    ]


def test_inside_one_long_turn_only_the_newest_results_stay_whole() -> None:
    entries = long_turn(12)
    # Turn protection as before (no budget): the single turn protects everything.
    assert plan_micro(entries, 10**9) == []
    # With a budget of zero, only the newest K results are whole, whatever K is.
    for k in (0, 1, 3, 5):
        planned = plan_micro(entries, 10**9, keep_results=k, turn_budget=0)
        assert kept_whole(entries, planned) == [f"r{i}" for i in range(12 - k, 12)]


def test_the_turn_budget_protects_the_newest_parts_and_the_oldest_lose_it_first() -> None:
    entries = [*long_turn(4, prompt="first", ids="a"), *long_turn(4, prompt="second", ids="b")]
    c = counter()
    size = c.count_text(entries[2].message.tool_results[0].text)
    # Room for about five results: the newest five stay whole, the three oldest are cut.
    planned = plan_micro(
        entries, 10**9, keep_results=3, turn_budget=int(5.5 * size), count=c.count_text
    )
    assert kept_whole(entries, planned) == ["a3", "b0", "b1", "b2", "b3"]
    # The newest K are whole even when they alone exceed the budget.
    planned = plan_micro(entries, 10**9, keep_results=3, turn_budget=10, count=c.count_text)
    assert len(kept_whole(entries, planned)) == 3


def test_once_a_part_loses_protection_every_older_one_has_lost_it_too() -> None:
    entries = long_turn(6)
    units = collect_units(entries, 200, estimate_tokens)
    huge = Unit("call:big", entry_index=len(entries), size=10**9)
    keep = protected_keys(entries, [*units, huge], keep_results=0, turn_budget=10**6)
    assert keep == set()  # the newest unit does not fit, so nothing older is protected


def test_micro_frees_oldest_unprojected_first_and_skips_what_is_in_force() -> None:
    entries = long_turn(10)
    first = plan_micro(entries, 1, keep_results=3, turn_budget=0)
    assert [d.tool_use_id for d in first if isinstance(d, TruncateResult)] == ["r0"]
    second = plan_micro(entries, 1, keep_results=3, turn_budget=0, already={first[0].key})
    assert [d.tool_use_id for d in second if isinstance(d, TruncateResult)] == ["r1"]


def test_reasoning_of_the_current_turn_is_never_dropped() -> None:
    think = ThinkingPart(thinking="step by step " * 200, signature="sig")
    entries = [
        *turn(1),
        entry(user_text("now")),
        entry(assistant(think, read_use("a"))),
        entry(results("a", "x" * 3000)),
        entry(assistant(think.model_copy(update={"signature": "sig2"}), read_use("b"))),
        entry(results("b", "y" * 3000)),
    ]
    planned = plan_micro(entries, 10**9, keep_results=0, turn_budget=0)
    assert not any(isinstance(d, DropThinking) for d in planned)
    assert {d.kind for d in planned} == {"truncate_result"}


def test_attached_text_is_cut_like_a_result_and_typed_text_never() -> None:
    typed = "my own words, " * 300
    entries = [
        entry(user_text(typed)),
        attached("file contents line\n" * 300),
        entry(assistant(TextPart(text="seen"))),
        *turn(2),
        *turn(3),
        *turn(4),
    ]
    planned = plan_micro(entries, 10**9, keep_turns=3)
    assert [(type(d), d.message_id) for d in planned] == [(TruncateText, entries[1].id)]
    view = project([*entries, ProjectionEntry(directives=dump_directives(planned))])
    assert view[0].content[0] == TextPart(text=typed)
    assert "of this attached text were cut" in view[0].content[1].text  # type: ignore[union-attr]
    # An attachment does not start a turn of its own.
    assert protected_start(entries, 3) == 3


# --- properties --------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts(), st.data())
def test_every_view_planned_with_budgets_validates_and_keeps_the_newest_results(
    entries: list[Entry], data: st.DataObject
) -> None:
    need = data.draw(st.integers(0, 200_000))
    keep_turns = data.draw(st.integers(0, 4))
    keep_results = data.draw(st.integers(0, 5))
    turn_budget = data.draw(st.none() | st.integers(0, 20_000))
    rounds = data.draw(st.integers(1, 3))
    before = [e.model_dump_json() for e in entries]
    for _ in range(rounds):  # plan repeatedly, as successive Micro compactions would
        already = {d.key for ds in active_directives(entries).values() for d in ds}
        planned = plan_micro(
            visible_entries(entries),
            need,
            keep_turns=keep_turns,
            keep_results=keep_results,
            turn_budget=turn_budget,
            already=already,
        )
        assert not {d.key for d in planned} & already
        if planned:
            entries = [*entries, ProjectionEntry(directives=dump_directives(planned))]
    visible = visible_entries(entries)
    view = project(entries)
    assert validate_view(view, originals=[e.message for e in visible]) == []
    assert [e.model_dump_json() for e in entries[: len(before)]] == before
    newest = [r.tool_use_id for e in visible for r in e.message.tool_results][::-1][:keep_results]
    touched = {
        getattr(d, "tool_use_id", None) for ds in active_directives(entries).values() for d in ds
    }
    assert not touched & set(newest)
