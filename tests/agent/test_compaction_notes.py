"""The Compactor's order with Micro's second level: cuts, then notes oldest first, then Full
only when neither gets under the threshold; notes recorded once, so the cached prefix holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from peri_cli.agent.compaction.config import CompactConfig
from peri_cli.agent.loop import Agent
from peri_cli.base.events import Compacted
from peri_cli.context.directives import NoteResult, parse_directives
from peri_cli.context.projection import project
from peri_cli.providers.scripted import ScriptedProvider, ScriptedReply
from peri_cli.session.store import SessionStore
from peri_cli.session.transcript import MessageEntry, ProjectionEntry
from tests.agent.test_compaction import collect, compactor_of, make_agent
from tests.builders import counter, long_turn


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    (tmp_path / "ws").mkdir()
    return SessionStore(tmp_path / "home", tmp_path / "ws")


NOTE = "moved out of view by context compaction"
CUT = "cut by context compaction"


def kinds(agent: Agent) -> list[str]:
    texts = [r.text for m in agent.view() for r in m.tool_results]
    return ["note" if NOTE in t else "cut" if CUT in t else "whole" for t in texts]


def projections(agent: Agent) -> list[ProjectionEntry]:
    return [e for e in agent.session.entries if isinstance(e, ProjectionEntry)]


def window_at(entries: list[MessageEntry], ratio: float) -> int:
    """The window that the estimate of `entries` fills to `ratio` (no usage reported)."""
    return int((counter().count_messages(project(entries)) + 50) / ratio)


def one_turn(store: SessionStore, reads: int, ratio: float) -> Agent:
    """One prompt and `reads` results of ~300 tokens, the window `ratio` full: a quarter of the
    window keeps the newest whole, and cut to ~160 tokens each (call and stub) the rest would
    still end above 47.5%; as notes (~70 tokens with their calls) they would not."""
    entries = long_turn(reads, result_chars=1_100)
    config = CompactConfig(context_window=window_at(entries, ratio))
    return make_agent(store, entries, ScriptedProvider([]), config)


async def test_below_full_the_large_step_rule_stays(store: SessionStore) -> None:
    agent = one_turn(store, 40, 0.85)
    assert await collect(compactor_of(agent).before_request(agent)) == []  # waits, no notes


async def test_at_the_full_threshold_notes_come_before_a_summary(store: SessionStore) -> None:
    agent = one_turn(store, 40, 0.97)
    window = compactor_of(agent).config.context_window
    assert window is not None
    events = await collect(compactor_of(agent).before_request(agent))
    compactions = [e for e in events if isinstance(e, Compacted)]
    assert [e.strategy for e in compactions] == ["micro"]  # no summary asked for
    micro = compactions[0]
    assert micro.tokens_after is not None and micro.tokens_after < 0.95 * window
    assert "note_result" in micro.detail
    seen = kinds(agent)
    assert seen == sorted(seen, key=["note", "cut", "whole"].index), seen
    assert seen[0] == "note" and seen[-3:] == ["whole"] * 3


async def test_with_earlier_turns_full_still_comes_first(store: SessionStore) -> None:
    entries = [*long_turn(30, 1_100, "an earlier task", "a"), *long_turn(10, 1_100, ids="b")]
    config = CompactConfig(context_window=window_at(entries, 0.97))
    provider = ScriptedProvider([ScriptedReply(text="<summary>Goal: read.</summary>")])
    agent = make_agent(store, entries, provider, config)
    events = await collect(compactor_of(agent).before_request(agent))
    assert [e.strategy for e in events if isinstance(e, Compacted)] == ["full"]


async def test_notes_are_recorded_once_and_the_prefix_before_new_ones_holds(
    store: SessionStore,
) -> None:
    agent = one_turn(store, 40, 0.97)
    await collect(compactor_of(agent).before_request(agent))
    first_view = agent.view()
    (first,) = projections(agent)
    # The turn goes on: 24 more Reads fill the window past the Full threshold again.
    agent.session.append(*long_turn(24, result_chars=1_100, ids="s")[1:])
    (micro,) = await collect(compactor_of(agent).before_request(agent))
    assert isinstance(micro, Compacted) and micro.strategy == "micro"
    second = projections(agent)[-1]
    before = parse_directives(first.directives)
    new = parse_directives(second.directives)
    assert new and not {d.key for d in before} & {d.key for d in new}  # nothing rewritten
    noted_before = [d.tool_use_id for d in before if isinstance(d, NoteResult)]
    noted_now = [d.tool_use_id for d in new if isinstance(d, NoteResult)]
    assert noted_now and not set(noted_now) & set(noted_before)
    order = [u.id for m in agent.view() for u in m.tool_uses]
    assert max(map(order.index, noted_before)) < min(map(order.index, noted_now))
    # Every message before the first one the second step changed renders as it did.
    mark = (second.model_extra or {})["cache_mark"]
    assert agent.view()[: mark + 1] == first_view[: mark + 1]
