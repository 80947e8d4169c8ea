"""Projection directives, the renderer and the view validator, on synthetic transcripts."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from peri_cli.base.messages import (
    ImagePart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    dump_message,
    tool_result,
    user_text,
)
from peri_cli.context.directives import (
    DropThinking,
    ElideInput,
    ReplaceImage,
    TruncateResult,
    dump_directives,
    parse_directives,
)
from peri_cli.context.micro import plan_micro
from peri_cli.context.projection import project, render_message, visible_entries
from peri_cli.context.textcut import cut_middle, cut_points, is_boundary
from peri_cli.context.viewrules import validate_view
from peri_cli.session.transcript import (
    CompactBoundary,
    Entry,
    MessageEntry,
    ProjectionEntry,
    dump_entry,
    parse_entry,
)

PNG = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def entry(message: Message) -> MessageEntry:
    return MessageEntry(message=message)


def assistant(*parts: Part) -> Message:
    return Message(role="assistant", content=list(parts))


def use(i: str, name: str = "Read", **inp: object) -> ToolUsePart:
    return ToolUsePart(id=i, name=name, input=dict(inp) or {"file_path": "a.py"})


def results(*pairs: tuple[str, str]) -> Message:
    return Message(role="user", content=[tool_result(i, text) for i, text in pairs])


def dumps(entries: Sequence[Entry]) -> list[str]:
    return [dump_entry(e) for e in entries]


# --- cutting text ------------------------------------------------------------------------------


def test_cut_keeps_head_and_tail_and_says_how_much_was_cut() -> None:
    text = "".join(f"line {i}\n" for i in range(1000))
    cut = cut_middle(text, 200, 200)
    assert cut.startswith("line 0\n") and cut.endswith("line 999\n")
    assert len(cut) < 700
    marker = next(line for line in cut.splitlines() if "cut by context compaction" in line)
    omitted = int(marker.split(" characters")[0].split("… ")[1].replace(",", ""))
    kept = cut.replace(marker + "\n", "")
    assert omitted + len(kept) == len(text)  # the marker's count is exact, in characters


def test_short_text_is_not_cut() -> None:
    assert cut_middle("short", 200, 200) == "short"


def test_cjk_text_is_cut_by_characters() -> None:
    text = "上下文工程压缩不修改原始消息正文。" * 200
    cut = cut_middle(text, 50, 50)
    head, _, tail = cut.partition("[…")
    assert text.startswith(head.rstrip("\n")) and len(head.rstrip("\n")) == 50
    assert text.endswith(tail.split("…]")[1].lstrip("\n"))
    assert cut.encode("utf-8").decode("utf-8") == cut


def test_cut_never_splits_a_character_sequence() -> None:
    family = "👨\u200d👩\u200d👧"
    for filler in ("é" * 7, "e\u0301" * 7, family * 4, "🇨🇳🇯🇵" * 5, "한" * 9, "a\r\n" * 9):
        text = filler * 40
        for head in range(0, 30):
            end, start = cut_points(text, head, head)
            assert end <= start
            assert is_boundary(text, end) and is_boundary(text, start), (filler, head)
            kept = text[start:]
            if kept:
                assert unicodedata.category(kept[0]) not in ("Mn", "Me")
                assert kept[0] != "\u200d" and text[end - 1 : end] != "\u200d"
            cut = cut_middle(text, head, head)
            assert cut == text or (cut.startswith(text[:end]) and cut.endswith(kept))


def test_boundaries() -> None:
    assert not is_boundary("e\u0301x", 1)  # before a combining accent
    assert not is_boundary("a\u200db", 2)  # after a joiner
    assert not is_boundary("🇨🇳🇯🇵", 1) and is_boundary("🇨🇳🇯🇵", 2)
    assert not is_boundary("\r\n", 1)
    assert is_boundary("ab", 1) and is_boundary("中文", 1)


# --- rendering ---------------------------------------------------------------------------------


def test_truncate_result_renders_a_copy() -> None:
    long = "x" * 5000
    stored = entry(results(("t1", long)))
    d = TruncateResult(message_id=stored.id, tool_use_id="t1", head=100, tail=100)
    rendered = render_message(stored.message, [d])
    assert rendered is not stored.message
    assert len(rendered.tool_results[0].text) < 400
    assert stored.message.tool_results[0].text == long


def test_elided_input_stays_an_object_and_keeps_the_path() -> None:
    content = "def f():\n    return 1\n" * 300
    a = assistant(use("w1", "Write", file_path="src/big.py", content=content))
    stored = entry(a)
    d = ElideInput(
        message_id=stored.id,
        tool_use_id="w1",
        fields={"content": "[elided; this note is not file content]"},
    )
    rendered = render_message(a, [d])
    inp = rendered.tool_uses[0].input
    assert isinstance(inp, dict)
    assert inp["file_path"] == "src/big.py"
    assert inp["content"] == "[elided; this note is not file content]"
    assert a.tool_uses[0].input["content"] == content


def test_images_become_placeholders_top_level_and_in_results() -> None:
    msg = Message(
        role="user",
        content=[
            TextPart(text="look"),
            ImagePart(media_type="image/png", data=PNG),
            ToolResultPart(
                tool_use_id="r1",
                content=[TextPart(text="img:"), ImagePart(media_type="image/png", data=PNG)],
            ),
        ],
    )
    ds = [
        ReplaceImage(message_id="m", index=1, placeholder="[image omitted]"),
        ReplaceImage(message_id="m", index=1, tool_use_id="r1", placeholder="[result image]"),
    ]
    rendered = render_message(msg, ds)
    assert rendered.content[1] == TextPart(text="[image omitted]")
    result = rendered.content[2]
    assert isinstance(result, ToolResultPart)
    assert result.content[1] == TextPart(text="[result image]")
    assert not any(isinstance(p, ImagePart) for p in rendered.content)


def test_thinking_is_dropped_whole_never_cut() -> None:
    thinking = ThinkingPart(thinking="deep thought " * 100, signature="sig")
    a = assistant(thinking, TextPart(text="answer"))
    rendered = render_message(a, [DropThinking(message_id="m", index=0)])
    assert rendered.content == [TextPart(text="answer")]
    # A directive that names a non-thinking part does nothing.
    assert render_message(a, [DropThinking(message_id="m", index=1)]) is a


def test_directive_that_matches_nothing_returns_the_same_object() -> None:
    msg = results(("t1", "short"))
    d = TruncateResult(message_id="m", tool_use_id="nope", head=1, tail=1)
    assert render_message(msg, [d]) is msg


def test_directives_round_trip_and_unknown_kinds_are_skipped() -> None:
    ds = [
        TruncateResult(message_id="m", tool_use_id="t", head=1, tail=2),
        DropThinking(message_id="m", index=0),
    ]
    raw = [*dump_directives(ds), {"kind": "from_the_future", "message_id": "m"}, {"bad": 1}]
    assert parse_directives(raw) == ds


# --- the projected view ------------------------------------------------------------------------


def session_with_directives() -> tuple[list[Entry], MessageEntry, MessageEntry]:
    long = "結果 " * 3000
    first = entry(user_text("read it"))
    call = entry(assistant(ThinkingPart(thinking="hmm", signature="s1"), use("t1")))
    res = entry(results(("t1", long)))
    rest = [entry(assistant(TextPart(text="done"))), entry(user_text("next"))]
    directives = [
        TruncateResult(message_id=res.id, tool_use_id="t1", head=100, tail=100),
        DropThinking(message_id=call.id, index=0),
    ]
    proj = ProjectionEntry(directives=dump_directives(directives), tokens_before=10, tokens_after=5)
    return [first, call, res, proj, *rest], call, res


def test_project_applies_directives_without_touching_stored_messages() -> None:
    entries, call, res = session_with_directives()
    before = dumps(entries)
    view = project(entries)
    assert dumps(entries) == before
    assert validate_view(view) == []
    assert len(view[2].tool_results[0].text) < 500
    assert not any(isinstance(p, ThinkingPart) for p in view[1].content)
    assert res.message.tool_results[0].text.startswith("結果")
    assert isinstance(call.message.content[0], ThinkingPart)


def test_resume_renders_the_same_view() -> None:
    entries, _, _ = session_with_directives()
    reloaded = [parse_entry(dump_entry(e)) for e in entries]
    assert [dump_message(m) for m in project(reloaded)] == [
        dump_message(m) for m in project(entries)
    ]


def test_unchanged_messages_are_passed_through_not_copied() -> None:
    entries, _, _ = session_with_directives()
    stored = [e.message for e in visible_entries(entries)]
    view = project(entries)
    assert view[0] is stored[0]
    assert view[3] is stored[3]
    assert project(entries)[2] is view[2]  # a directed copy is cached, not rebuilt


def test_directives_before_a_boundary_do_not_resurrect_excluded_messages() -> None:
    entries, _, _ = session_with_directives()
    summary = entry(user_text("summary"))
    entries += [summary, CompactBoundary(summary_id=summary.id)]
    assert [m.text for m in project(entries)] == ["summary"]


# --- the validator -----------------------------------------------------------------------------


def test_validator_accepts_a_normal_view() -> None:
    view = [
        user_text("hi"),
        assistant(use("1")),
        results(("1", "x")),
        assistant(TextPart(text="k")),
    ]
    assert validate_view(view) == []


def test_validator_finds_broken_views() -> None:
    bad_input = ToolUsePart.model_construct(id="1", name="Read", input=["not", "an", "object"])
    cases = {
        "start with a user": [assistant(TextPart(text="x"))],
        "in a row": [user_text("a"), user_text("b")],
        "not answered": [user_text("a"), assistant(use("1")), user_text("b")],
        "without a tool_use": [user_text("a"), assistant(TextPart(text="x")), results(("9", "r"))],
        "not a JSON object": [
            user_text("a"),
            Message.model_construct(role="assistant", content=[bad_input]),
            results(("1", "r")),
        ],
        "empty or whitespace-only text": [
            Message.model_construct(role="user", content=[TextPart(text="")])
        ],
        "whitespace-only": [Message.model_construct(role="user", content=[TextPart(text=" \n")])],
        "duplicate": [
            user_text("a"),
            assistant(use("1")),
            results(("1", "r")),
            assistant(use("1")),
            results(("1", "r")),
        ],
        "tool_result in a assistant": [
            user_text("a"),
            Message.model_construct(role="assistant", content=[tool_result("1", "x")]),
        ],
    }
    for expected, view in cases.items():
        problems = validate_view(view)
        assert any(expected in p for p in problems), (expected, problems)


def test_validator_checks_signed_thinking_against_the_originals() -> None:
    original = assistant(ThinkingPart(thinking="full reasoning", signature="sig"))
    altered = assistant(ThinkingPart(thinking="full reas", signature="sig"))
    view = [user_text("q"), altered]
    assert any("signed thinking" in p for p in validate_view(view, originals=[original]))
    assert validate_view([user_text("q"), original], originals=[original]) == []


# --- speed -------------------------------------------------------------------------------------


def test_project_renders_a_thousand_messages_with_200_directives() -> None:
    """Speed is bench/request_build.py's to measure; here: every directive lands."""
    entries: list[Entry] = []
    directives: list[TruncateResult] = []
    for i in range(250):
        entries.append(entry(user_text(f"turn {i}")))
        entries.append(entry(assistant(TextPart(text="reading"), use(f"t{i}"))))
        res = entry(results((f"t{i}", "output line\n" * 400)))
        entries.append(res)
        entries.append(entry(assistant(TextPart(text=f"answer {i}"))))
        if i < 200:
            directives.append(
                TruncateResult(message_id=res.id, tool_use_id=f"t{i}", head=200, tail=200)
            )
    for k in range(0, len(directives), 20):  # directives arrive in many entries over time
        entries.append(ProjectionEntry(directives=dump_directives(directives[k : k + 20])))
    view = project(entries)
    assert len(view) == 1000
    cut = [m for m in view if m.tool_results and len(m.tool_results[0].content[0].text) < 2000]
    assert len(cut) == 200  # the 200 directed results are cut, the 50 newest stay whole


# --- properties --------------------------------------------------------------------------------

TEXT = st.text(
    alphabet=st.sampled_from(list("ab \n中文字é\u0301🇨🇳👩\u200d💻")), min_size=1, max_size=60
).map(lambda s: s * 40)


@st.composite
def transcripts(draw: st.DrawFn) -> list[Entry]:
    entries: list[Entry] = []
    n_turns = draw(st.integers(1, 7))
    counter = 0
    for _ in range(n_turns):
        parts: list[Part] = [TextPart(text=draw(st.sampled_from(["go", "继续", "next"])))]
        if draw(st.booleans()):
            parts.append(ImagePart(media_type="image/png", data=PNG * draw(st.integers(1, 50))))
        entries.append(entry(Message(role="user", content=parts)))
        for _ in range(draw(st.integers(0, 3))):
            a_parts: list[Part] = []
            if draw(st.booleans()):
                a_parts.append(ThinkingPart(thinking=draw(TEXT), signature="sig"))
            uses = []
            for _ in range(draw(st.integers(1, 2))):
                counter += 1
                tid = f"toolu_{counter}"
                if draw(st.booleans()):
                    inp = {"file_path": "f.py", "content": draw(TEXT)}
                    uses.append(ToolUsePart(id=tid, name="Write", input=inp))
                else:
                    uses.append(use(tid))
            a_parts.extend(uses)
            entries.append(entry(Message(role="assistant", content=a_parts)))
            res_parts: list[Part] = []
            for u in uses:
                content: list[TextPart | ImagePart] = [TextPart(text=draw(TEXT))]
                if draw(st.booleans()):
                    content.append(ImagePart(media_type="image/png", data=PNG))
                res_parts.append(ToolResultPart(tool_use_id=u.id, content=content))
            entries.append(entry(Message(role="user", content=res_parts)))
        entries.append(entry(assistant(TextPart(text="done"))))
    return entries


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    transcripts(),
    st.integers(0, 200_000),
    st.integers(0, 4),
    st.integers(0, 300),
    st.integers(1, 3),
)
def test_every_planned_view_is_valid_and_no_stored_message_changes(
    entries: list[Entry], need: int, keep_turns: int, keep_chars: int, rounds: int
) -> None:
    before = dumps(entries)
    original_view = project(entries)
    for _ in range(rounds):  # plan repeatedly, as successive Micro compactions would
        already = {
            d.key
            for e in entries
            if isinstance(e, ProjectionEntry)
            for d in parse_directives(e.directives)
        }
        planned = plan_micro(
            visible_entries(entries),
            need,
            keep_turns=keep_turns,
            keep_chars=keep_chars,
            already=already,
        )
        assert not {d.key for d in planned} & already
        if planned:
            entries = [*entries, ProjectionEntry(directives=dump_directives(planned))]
    view = project(entries)
    assert validate_view(view, originals=[e.message for e in visible_entries(entries)]) == []
    assert dumps(entries[: len(before)]) == before
    # Pairing and order are preserved: the same tool ids in the same places.
    ids = [[getattr(p, "id", getattr(p, "tool_use_id", None)) for p in m.content] for m in view]
    orig = [
        [getattr(p, "id", getattr(p, "tool_use_id", None)) for p in m.content]
        for m in original_view
    ]
    assert [[i for i in row if i] for row in ids] == [[i for i in row if i] for row in orig]
    # Signed thinking is kept whole or dropped whole.
    signed = {p.thinking for m in original_view for p in m.content if isinstance(p, ThinkingPart)}
    for m in view:
        for p in m.content:
            if isinstance(p, ThinkingPart):
                assert p.thinking in signed


@st.composite
def arbitrary_directives(draw: st.DrawFn, entries: list[Entry]) -> list[dict[str, object]]:
    ids = [e.id for e in entries if isinstance(e, MessageEntry)] + ["missing"]
    tool_ids = [
        p.id for e in entries if isinstance(e, MessageEntry) for p in e.message.tool_uses
    ] + ["nope"]
    out: list[dict[str, object]] = []
    for _ in range(draw(st.integers(0, 12))):
        mid = draw(st.sampled_from(ids))
        kind = draw(st.sampled_from(["truncate", "elide", "image", "thinking"]))
        if kind == "truncate":
            d: object = TruncateResult(
                message_id=mid,
                tool_use_id=draw(st.sampled_from(tool_ids)),
                head=draw(st.integers(0, 500)),
                tail=draw(st.integers(0, 500)),
            )
        elif kind == "elide":
            d = ElideInput(
                message_id=mid,
                tool_use_id=draw(st.sampled_from(tool_ids)),
                fields={draw(st.sampled_from(["content", "file_path", "x"])): "[note]"},
            )
        elif kind == "image":
            d = ReplaceImage(
                message_id=mid,
                index=draw(st.integers(0, 3)),
                tool_use_id=draw(st.none() | st.sampled_from(tool_ids)),
                placeholder="[img]",
            )
        else:
            d = DropThinking(message_id=mid, index=draw(st.integers(0, 3)))
        out.append(json.loads(json.dumps(d.model_dump(mode="json"))))  # type: ignore[attr-defined]
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_even_arbitrary_directives_never_break_the_view_or_the_record(data: st.DataObject) -> None:
    entries = data.draw(transcripts())
    before = dumps(entries)
    raw = data.draw(arbitrary_directives(entries))
    entries = [*entries, ProjectionEntry(directives=raw)]
    view = project(entries)
    assert validate_view(view, originals=[e.message for e in visible_entries(entries)]) == []
    assert dumps(entries[:-1]) == before
