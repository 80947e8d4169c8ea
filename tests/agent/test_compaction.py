"""The Compactor (Micro and Full) and its configuration, against a scripted provider."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from peri_cli.agent.compaction.compactor import Compactor
from peri_cli.agent.compaction.config import CompactConfig
from peri_cli.agent.loop import Agent
from peri_cli.base.events import (
    AssistantMessage,
    Compacted,
    CompactFailed,
    CompactWarning,
    Event,
    TurnEnded,
    UsageSpent,
)
from peri_cli.base.messages import (
    Message,
    TextPart,
    ThinkingPart,
    ToolUsePart,
    Usage,
    tool_result,
    user_text,
)
from peri_cli.base.provider import ProviderError
from peri_cli.base.settings import Settings
from peri_cli.base.tool import ToolRegistry
from peri_cli.context.contributions import ContributionChain
from peri_cli.context.micro import ORIGIN_REINJECT, ORIGIN_SUMMARY
from peri_cli.context.projection import project
from peri_cli.context.tokens import Backend, TokenCounter
from peri_cli.context.viewrules import validate_view
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.providers.scripted import ScriptedProvider, ScriptedReply
from peri_cli.session.store import Session, SessionStore
from peri_cli.session.transcript import CompactBoundary, MessageEntry, ProjectionEntry, Snapshot
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

SYSTEM = "You are Peri, a coding agent under test."


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def store(tmp_path: Path, ws: Path) -> SessionStore:
    return SessionStore(tmp_path / "home", ws)


def make_agent(
    store: SessionStore,
    entries: list[MessageEntry],
    provider: ScriptedProvider,
    config: CompactConfig,
    *,
    system: str = SYSTEM,
) -> Agent:
    session = store.create(Snapshot(system=system))
    if entries:
        session.append(*entries)
    return Agent(
        session=session,
        provider=provider,
        model="test-model",
        tools=ToolRegistry(),
        policy=PermissionPolicy(mode="bypass", workspace=store.workspace),
        chain=ContributionChain(),
        compactor=Compactor(config, counter=counter()),
    )


def compactor_of(agent: Agent) -> Compactor:
    assert isinstance(agent.compactor, Compactor)
    return agent.compactor


async def collect(events: AsyncIterator[Event]) -> list[Event]:
    """What the compactor shows (a summary request's usage goes to the totals, see below)."""
    return [e async for e in events if not isinstance(e, UsageSpent)]


async def test_a_summary_requests_usage_reaches_the_agents_totals(store: SessionStore) -> None:
    provider = ScriptedProvider([ScriptedReply(text=SUMMARY, usage=Usage(input_tokens=7))])
    agent = make_agent(store, one_turn_session(9_700), provider, CompactConfig())
    before = agent.usage_total
    spent = [e async for e in agent.compact_now(None) if isinstance(e, UsageSpent)]
    assert [e.usage.input_tokens for e in spent] == [7]
    assert agent.usage_total.input_tokens == before.input_tokens + 7


def file_bytes(session: Session) -> bytes:
    return session.path.read_bytes()


SUMMARY = "<analysis>thinking it over</analysis><summary>Goal: build it. Next: tests.</summary>"


# --- configuration ---------------------------------------------------------------------------


def test_config_from_settings_and_legacy_switch() -> None:
    settings = Settings.model_validate(
        {
            "compact": {"micro_compact_threshold": 0.5, "protected_turns": 2},
            "smart_compact_enabled": True,
            "context_window": 5000,
            "disable_auto_compact": True,
        }
    )
    cfg = CompactConfig.from_settings(settings)
    assert (cfg.micro_threshold, cfg.full_threshold, cfg.protected_turns) == (0.5, 0.95, 2)
    assert cfg.context_window == 5000 and cfg.disable_auto_compact and not cfg.disable_compact
    legacy_off = CompactConfig.from_settings(
        Settings.model_validate({"smart_compact_enabled": False})
    )
    assert legacy_off == CompactConfig()


# --- Micro through the Compactor ---------------------------------------------------------------


def micro_session(usage_tokens: int) -> list[MessageEntry]:
    entries = [t for n in range(1, 7) for t in turn(n, result_chars=6000)]
    entries[-1] = entry(entries[-1].message, Usage(input_tokens=usage_tokens, output_tokens=10))
    return entries


async def test_micro_compacts_old_results_once_per_sample(store: SessionStore) -> None:
    config = CompactConfig(context_window=10_000)
    agent = make_agent(store, micro_session(8_000), ScriptedProvider([]), config)
    stored = [e.model_dump_json() for e in agent.session.entries]
    events = await collect(compactor_of(agent).before_request(agent))
    assert [type(e) for e in events] == [Compacted]
    compacted = events[0]
    assert isinstance(compacted, Compacted) and compacted.strategy == "micro"
    assert compacted.tokens_before == 8_010
    assert compacted.tokens_after is not None and compacted.tokens_after < 6_000
    assert compacted.affected >= 1
    projection = agent.session.entries[-1]
    assert isinstance(projection, ProjectionEntry)
    assert (projection.tokens_before, projection.tokens_after) == (8_010, compacted.tokens_after)
    # Stored messages are unchanged; the view shows shortened old results, whole recent ones.
    assert [e.model_dump_json() for e in agent.session.entries[:-1]] == stored
    view = agent.view()
    assert "cut by context compaction" in view[2].tool_results[0].text
    assert "cut by context compaction" not in view[-2].tool_results[0].text
    assert validate_view(view) == []
    # The same sample drives no second compaction, however high it still looks.
    assert await collect(compactor_of(agent).before_request(agent)) == []
    assert sum(isinstance(e, ProjectionEntry) for e in agent.session.entries) == 1
    # A fresh Compactor (as after a restart) sees the freed tokens and does nothing either.
    fresh = Compactor(config, counter=counter())
    assert fresh.pressure(agent).tokens == compacted.tokens_after
    assert await collect(fresh.before_request(agent)) == []


async def test_below_the_micro_threshold_nothing_happens(store: SessionStore) -> None:
    agent = make_agent(
        store, micro_session(5_000), ScriptedProvider([]), CompactConfig(context_window=10_000)
    )
    count = len(agent.session.entries)
    assert await collect(compactor_of(agent).before_request(agent)) == []
    assert len(agent.session.entries) == count


async def test_disable_compact_turns_everything_automatic_off(store: SessionStore) -> None:
    config = CompactConfig(context_window=10_000, disable_compact=True)
    agent = make_agent(store, micro_session(9_900), ScriptedProvider([]), config)
    count = len(agent.session.entries)
    assert await collect(compactor_of(agent).before_request(agent)) == []
    assert len(agent.session.entries) == count


async def test_disable_auto_compact_keeps_micro_but_never_runs_full(store: SessionStore) -> None:
    provider = ScriptedProvider([])
    config = CompactConfig(context_window=10_000, disable_auto_compact=True)
    agent = make_agent(store, micro_session(9_900), provider, config)
    events = await collect(compactor_of(agent).before_request(agent))
    assert [type(e) for e in events] == [Compacted]
    assert provider.requests == []


# --- warnings and automatic Full ---------------------------------------------------------------


def one_turn_session(usage_tokens: int) -> list[MessageEntry]:
    entries = turn(1, result_chars=3000)
    entries[-1] = entry(entries[-1].message, Usage(input_tokens=usage_tokens))
    return [*entries, entry(user_text("and now the next step"))]


async def test_warning_before_full(store: SessionStore) -> None:
    provider = ScriptedProvider([])
    agent = make_agent(
        store, one_turn_session(9_200), provider, CompactConfig(context_window=10_000)
    )
    events = await collect(compactor_of(agent).before_request(agent))
    assert len(events) == 1 and isinstance(events[0], CompactWarning)
    assert 0.9 <= events[0].pressure < 0.95 and events[0].threshold == 0.95
    assert provider.requests == []


async def test_full_runs_when_micro_cannot_get_under_the_threshold(
    store: SessionStore, ws: Path
) -> None:
    (ws / "f1.py").write_text("current content of f1\n")
    provider = ScriptedProvider([ScriptedReply(text=SUMMARY)])
    agent = make_agent(
        store, one_turn_session(9_700), provider, CompactConfig(context_window=10_000)
    )
    events = await collect(compactor_of(agent).before_request(agent))
    assert [type(e) for e in events] == [CompactWarning, Compacted]
    full = events[1]
    assert isinstance(full, Compacted) and full.strategy == "full"
    assert full.tokens_before is not None and 9_700 < full.tokens_before < 9_800
    assert full.tokens_after is not None and 0 < full.tokens_after < 2_000
    assert full.affected == 5
    view = agent.view()
    assert len(view) == 1 and view[0].role == "user"
    assert "Goal: build it. Next: tests." in view[0].text
    assert "thinking it over" not in view[0].text
    assert "current content of f1" in view[0].text  # re-injected, as it is on disk now


async def test_summary_request_has_no_tools_and_asks_for_the_focus(store: SessionStore) -> None:
    provider = ScriptedProvider([ScriptedReply(text=SUMMARY)])
    entries = [
        *turn(1),
        entry(assistant(ThinkingPart(thinking="secret", signature="s"), TextPart(text="thought"))),
        entry(user_text("more")),
    ]
    agent = make_agent(store, entries, provider, CompactConfig(context_window=100_000))
    events = await collect(compactor_of(agent).compact_now(agent, "the parser bug"))
    assert isinstance(events[-1], Compacted)
    (request,) = provider.requests
    assert request.tools == []
    assert request.frozen_system == SYSTEM
    kinds = {type(p) for m in request.messages for p in m.content}
    assert kinds == {TextPart}  # tool calls and results as text, no reasoning blocks
    assert request.messages[-1].role == "user"
    last = request.messages[-1].text
    assert "Files touched" in last and "the parser bug" in last
    assert "[tool call Read" in request.messages[1].text
    assert validate_view(request.messages) == []


async def test_commit_layout_and_resume(store: SessionStore, ws: Path) -> None:
    (ws / "a.py").write_text("old text\n")
    entries = [
        entry(user_text("look at a.py")),
        entry(
            assistant(
                read_use("r1", "a.py"),
                read_use("r2", "missing.py"),
                ToolUsePart(id="s1", name="Skill", input={"name": "pdf"}),
            )
        ),
        entry(
            Message(
                role="user",
                content=[
                    tool_result("r1", "     1\told text"),
                    tool_result("r2", "File not found", is_error=True),
                    tool_result("s1", "skill body"),
                ],
            )
        ),
        entry(assistant(TextPart(text="read it")), Usage(input_tokens=300)),
    ]
    provider = ScriptedProvider([ScriptedReply(text=SUMMARY)])
    agent = make_agent(store, entries, provider, CompactConfig(context_window=50_000))
    (ws / "a.py").write_text("new text on disk\n")
    before = len(agent.session.entries)
    events = await collect(compactor_of(agent).compact_now(agent, "tests"))
    assert [type(e) for e in events] == [Compacted]
    summary, boundary, reinject = agent.session.entries[before:]
    assert isinstance(summary, MessageEntry) and isinstance(reinject, MessageEntry)
    assert isinstance(boundary, CompactBoundary)
    assert (summary.model_extra or {})["origin"] == ORIGIN_SUMMARY
    assert (reinject.model_extra or {})["origin"] == ORIGIN_REINJECT
    assert summary.message.role == "user" and "Continue the work" in summary.message.text
    assert boundary.summary_id == summary.id and boundary.focus == "tests"
    assert boundary.excluded_messages == 4
    assert boundary.tokens_before == events[0].tokens_before  # type: ignore[union-attr]
    assert boundary.tokens_after == events[0].tokens_after  # type: ignore[union-attr]
    assert "new text on disk" in reinject.message.text and "old text" not in reinject.message.text
    assert "missing.py" not in reinject.message.text
    assert "pdf" in reinject.message.text
    view = agent.view()
    assert [m.role for m in view] == ["user"] and validate_view(view) == []
    # Resume: the reloaded transcript renders the same view.
    session_id = agent.session.id
    agent.session.close()
    reopened = store.open(session_id)
    assert project(reopened.entries) == view
    reopened.close()


async def test_second_full_reinjects_only_what_the_excluded_history_read(
    store: SessionStore, ws: Path
) -> None:
    (ws / "a.py").write_text("alpha\n")
    entries = [
        entry(user_text("look")),
        entry(assistant(read_use("r1", "a.py"))),
        entry(results("r1", "     1\talpha")),
        entry(assistant(TextPart(text="seen")), Usage(input_tokens=100)),
    ]
    provider = ScriptedProvider([ScriptedReply(text=SUMMARY), ScriptedReply(text=SUMMARY)])
    agent = make_agent(store, entries, provider, CompactConfig(context_window=50_000))
    await collect(compactor_of(agent).compact_now(agent))
    assert "alpha" in agent.view()[0].text
    agent.session.append(entry(user_text("go on")), entry(assistant(TextPart(text="sure"))))
    before = len(agent.session.entries)
    events = await collect(compactor_of(agent).compact_now(agent))
    assert isinstance(events[-1], Compacted)
    added = agent.session.entries[before:]
    assert len(added) == 2  # summary and boundary; no file was read since the last Full
    assert "alpha" not in agent.view()[0].text.split("</summary>")[1]


# --- failure -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replies", "reason"),
    [
        ([ScriptedReply(error=ProviderError("bad request", status=400))], "bad request"),
        ([ScriptedReply(text="", stop_reason="end_turn")] * 3, "empty summary 3 times"),
        ([ScriptedReply(text="half a summ", stop_reason="max_tokens")], "max_tokens"),
    ],
)
async def test_failure_changes_nothing(
    store: SessionStore, replies: list[ScriptedReply], reason: str
) -> None:
    provider = ScriptedProvider(list(replies))
    agent = make_agent(store, turn(1), provider, CompactConfig(context_window=50_000))
    data, count, view = file_bytes(agent.session), len(agent.session.entries), agent.view()
    events = await collect(compactor_of(agent).compact_now(agent))
    assert len(events) == 1 and isinstance(events[0], CompactFailed)
    assert reason in events[0].reason
    assert file_bytes(agent.session) == data and len(agent.session.entries) == count
    assert agent.view() == view


async def test_an_empty_summary_is_retried(store: SessionStore) -> None:
    replies = [ScriptedReply(text=""), ScriptedReply(text="  \n"), ScriptedReply(text=SUMMARY)]
    provider = ScriptedProvider(list(replies))
    agent = make_agent(store, turn(1), provider, CompactConfig(context_window=50_000))
    events = await collect(compactor_of(agent).compact_now(agent))
    assert [type(e) for e in events] == [Compacted]
    assert len(provider.requests) == 3


async def test_cancel_during_the_summary_commits_nothing(store: SessionStore) -> None:
    provider = ScriptedProvider([ScriptedReply(text="a long summary " * 50, delay=0.05)])
    agent = make_agent(store, turn(1), provider, CompactConfig(context_window=50_000))
    data = file_bytes(agent.session)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(collect(compactor_of(agent).compact_now(agent)), 0.1)
    assert file_bytes(agent.session) == data


async def test_nothing_to_compact(store: SessionStore) -> None:
    provider = ScriptedProvider([])
    agent = make_agent(store, [], provider, CompactConfig())
    events = await collect(compactor_of(agent).compact_now(agent))
    assert len(events) == 1 and isinstance(events[0], CompactFailed)
    assert provider.requests == []


async def test_automatic_full_failure_reports_and_leaves_history(store: SessionStore) -> None:
    provider = ScriptedProvider([ScriptedReply(error=ProviderError("nope", status=400))])
    agent = make_agent(
        store, one_turn_session(9_900), provider, CompactConfig(context_window=10_000)
    )
    data = file_bytes(agent.session)
    events = await collect(compactor_of(agent).before_request(agent))
    assert [type(e) for e in events] == [CompactWarning, CompactFailed]
    assert file_bytes(agent.session) == data
    # Same sample: no second attempt.
    assert await collect(compactor_of(agent).before_request(agent)) == []


# --- the stall guard ---------------------------------------------------------------------------


async def test_two_fulls_that_cannot_get_under_stop_the_turn(store: SessionStore) -> None:
    provider = ScriptedProvider([ScriptedReply(text=SUMMARY), ScriptedReply(text=SUMMARY)])
    big_system = "Rules. " * 2000  # the frozen prompt alone overflows the tiny window
    agent = make_agent(
        store,
        one_turn_session(5_000),
        provider,
        CompactConfig(context_window=1_000),
        system=big_system,
    )
    events = await collect(compactor_of(agent).before_request(agent))
    kinds = [type(e) for e in events]
    assert kinds == [CompactWarning, Compacted, Compacted, TurnEnded]
    ended = events[-1]
    assert isinstance(ended, TurnEnded) and ended.reason == "compact_stalled"
    assert ended.error is not None and "2 compactions in a row" in ended.error
    assert len(provider.requests) == 2


# --- in the loop -------------------------------------------------------------------------------


async def test_the_loop_compacts_before_the_model_call(store: SessionStore) -> None:
    provider = ScriptedProvider([ScriptedReply(text=SUMMARY), ScriptedReply(text="continuing")])
    agent = make_agent(
        store, one_turn_session(9_800), provider, CompactConfig(context_window=10_000)
    )
    events = await collect(agent.run())
    kinds = [type(e) for e in events]
    assert Compacted in kinds and AssistantMessage in kinds
    assert kinds.index(Compacted) < kinds.index(AssistantMessage)
    summary_request, turn_request = provider.requests
    assert summary_request.tools == [] and turn_request.tools == agent.tools.specs()
    assert "Goal: build it" in turn_request.messages[0].text
    # The user's own words stay (verbatim, after the summary); tool calls and results go.
    assert "task 1" in turn_request.messages[0].text
    assert not any(m.tool_uses or m.tool_results for m in turn_request.messages)
    assert validate_view(turn_request.messages) == []
    # The reply after the Full is a new sample: measured from its usage, nothing more to do.
    assert await collect(compactor_of(agent).before_request(agent)) == []


# --- the tokenizer-free bound ------------------------------------------------------------------


class WatchedCounter(TokenCounter):
    """Records whether the tokenizer was loaded."""

    def __init__(self) -> None:
        super().__init__()
        self.warmed = 0

    def warm(self) -> Backend:
        self.warmed += 1
        return super().warm()


async def test_a_short_session_never_loads_the_tokenizer(store: SessionStore) -> None:
    agent = make_agent(store, turn(1, result_chars=500), ScriptedProvider([]), CompactConfig())
    watched = WatchedCounter()
    assert await collect(Compactor(CompactConfig(), counter=watched).before_request(agent)) == []
    assert watched.warmed == 0


# --- issue 13: budgets, large steps, the user's words, no usage ---------------------------------


def long_session(reads: int, usage_tokens: int, result_chars: int = 4000) -> list[MessageEntry]:
    entries = long_turn(reads, result_chars=result_chars)
    last = entries[-1]
    answer = entry(assistant(TextPart(text="all read")), Usage(input_tokens=usage_tokens))
    return [*entries[:-1], last, answer, entry(user_text("and the next one?"))]


async def test_micro_projects_inside_one_long_turn_down_to_the_low_water_mark(
    store: SessionStore,
) -> None:
    config = CompactConfig(context_window=20_000)
    agent = make_agent(store, long_session(16, 16_000), ScriptedProvider([]), config)
    events = await collect(compactor_of(agent).before_request(agent))
    (micro,) = events
    assert isinstance(micro, Compacted) and micro.strategy == "micro"
    assert micro.tokens_after is not None and micro.tokens_after <= 0.475 * 20_000
    assert micro.prefix_changed is not None and micro.prefix_changed > 0
    assert "freed" in micro.detail and "prefix changed" in micro.detail
    texts = [r.text for m in agent.view() for r in m.tool_results]
    assert "cut by context compaction" not in texts[-1]  # the newest are whole
    assert all("cut by context compaction" in t for t in texts[:8])  # the oldest are not
    # The next request may mark the last message the projection left unchanged for the cache.
    projection = agent.session.entries[-1]
    assert isinstance(projection, ProjectionEntry)
    mark = (projection.model_extra or {})["cache_mark"]
    assert agent.build_request().cache_marks == (mark,)
    assert agent.view()[: mark + 1] == project(agent.session.entries[:-1])[: mark + 1]
    assert agent.view()[mark + 1] != project(agent.session.entries[:-1])[mark + 1]
    # A pressure sample that grew a little does not move the prefix again.
    agent.session.append(entry(assistant(TextPart(text="ok")), Usage(input_tokens=9_000)))
    agent.session.append(entry(user_text("more")))
    assert await collect(compactor_of(agent).before_request(agent)) == []


async def test_a_small_micro_step_waits_for_the_full_threshold(store: SessionStore) -> None:
    # Two long results in the protected budget, little to project: Micro could only take a
    # small step, so nothing happens until Full is due.
    entries = [*turn(1, result_chars=2400), *long_session(3, 0, result_chars=12_000)]
    entries[-2] = entry(entries[-2].message, Usage(input_tokens=8_000))
    provider = ScriptedProvider([ScriptedReply(text=SUMMARY)])
    agent = make_agent(store, entries, provider, CompactConfig(context_window=10_000))
    assert await collect(compactor_of(agent).before_request(agent)) == []
    agent.session.append(entry(assistant(TextPart(text="ok")), Usage(input_tokens=9_700)))
    agent.session.append(entry(user_text("go on")))
    events = await collect(compactor_of(agent).before_request(agent))
    assert [type(e) for e in events] == [CompactWarning, Compacted]
    assert isinstance(events[1], Compacted) and events[1].strategy == "full"


async def test_full_keeps_what_the_user_typed_after_the_summary(
    store: SessionStore, ws: Path
) -> None:
    (ws / "f1.py").write_text("print('f1')\n")
    entries = [
        entry(user_text("Remember: the deploy target is ORCHID-7.")),
        attached("pasted log line\n" * 50),
        entry(assistant(TextPart(text="noted"))),
        *turn(1),
        entry(user_text("now the tests")),
    ]
    provider = ScriptedProvider([ScriptedReply(text=SUMMARY), ScriptedReply(text=SUMMARY)])
    agent = make_agent(store, entries, provider, CompactConfig(context_window=50_000))
    events = await collect(compactor_of(agent).compact_now(agent))
    assert (
        isinstance(events[-1], Compacted) and "kept 3 user messages verbatim" in events[-1].detail
    )
    (view,) = agent.view()
    text = view.text
    order = [
        text.index("Goal: build it"),
        text.index("ORCHID-7"),
        text.index("task 1"),
        text.index("now the tests"),
        text.index("print('f1')"),
    ]
    assert order == sorted(order)  # summary, the user's words oldest first, then files
    assert "pasted log line" not in text  # an attachment is not the user's typing
    # A second Full carries them forward, with what was typed since.
    agent.session.append(entry(user_text("and deploy")), entry(assistant(TextPart(text="done"))))
    await collect(compactor_of(agent).compact_now(agent))
    text = agent.view()[0].text
    assert text.count("ORCHID-7") == 1 and "and deploy" in text


async def test_the_users_words_are_kept_newest_first_within_the_budget(
    store: SessionStore,
) -> None:
    entries = [
        x
        for n in range(40)
        for x in (
            entry(user_text(f"fact {n}: " + "word " * 60)),
            entry(assistant(TextPart(text="ok"))),
        )
    ]
    provider = ScriptedProvider([ScriptedReply(text=SUMMARY)])
    config = CompactConfig(context_window=20_000, user_text_budget=0.1)
    agent = make_agent(store, entries, provider, config)
    await collect(compactor_of(agent).compact_now(agent))
    text = agent.view()[0].text
    assert "fact 39:" in text and "fact 0:" not in text
    kept = [n for n in range(40) if f"fact {n}:" in text]
    assert kept == list(range(kept[0], 40))  # a newest run, oldest first
    assert f"{kept[0]:,} older messages of the user did not fit" in text
    assert counter().count_text(text) < 2_000 + 600  # the budget, the summary and the tags


@pytest.mark.parametrize("where", ["tool input", "typed text"])
async def test_item_20_a_10_mb_input_gives_a_summary_request_that_fits(
    store: SessionStore, where: str
) -> None:
    big = "x = 1  # filler\n" * (10_000_000 // 16)
    if where == "tool input":
        write = ToolUsePart(id="w", name="Write", input={"file_path": "a.py", "content": big})
        entries = [entry(user_text("write it")), entry(assistant(write)), entry(results("w", "ok"))]
    else:
        entries = [entry(user_text("here is my log:\n" + big))]
    window = 200_000
    provider = ScriptedProvider([ScriptedReply(text=SUMMARY)])
    agent = make_agent(store, entries, provider, CompactConfig(context_window=window))
    events = await collect(compactor_of(agent).compact_now(agent))
    assert isinstance(events[-1], Compacted)
    (request,) = provider.requests
    size = counter().count_messages(request.messages)
    assert size < window // 2
    assert "summarised here, not quoted" in "".join(m.text for m in request.messages)
    assert validate_view(request.messages) == []


async def test_pressure_without_usage_estimates_and_compacts(store: SessionStore) -> None:
    """A provider that reported nothing (usage None, or the zeros older sessions stored) leaves
    the history to be estimated, so compaction still fires before the request."""
    for usage in (None, Usage()):
        entries = long_session(16, 0)
        entries[-2] = entry(entries[-2].message, usage)
        agent = make_agent(
            store, entries, ScriptedProvider([]), CompactConfig(context_window=20_000)
        )
        sample = compactor_of(agent).pressure(agent)
        assert not sample.from_usage and sample.ratio > 0.75
        events = await collect(compactor_of(agent).before_request(agent))
        assert [getattr(e, "strategy", None) for e in events] == ["micro"]


async def test_an_estimated_usage_counts_for_pressure_but_never_calibrates(
    store: SessionStore,
) -> None:
    entries = long_session(4, 0)
    estimated = MessageEntry(
        message=entries[-2].message, usage=Usage(input_tokens=3_000), usage_estimated=True
    )
    entries[-2] = estimated
    agent = make_agent(store, entries, ScriptedProvider([]), CompactConfig(context_window=50_000))
    c = compactor_of(agent)
    before = c.counter.ratio
    sample = c.pressure(agent)
    assert sample.from_usage and sample.tokens >= 3_000
    assert c.counter.ratio == before
