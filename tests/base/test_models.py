"""The known-models table: lookup rules, the window override, cost math, defaults."""

from __future__ import annotations

import pytest

from peri_cli.base.messages import Usage
from peri_cli.base.models import (
    DEFAULT_CONTEXT_WINDOW,
    context_window,
    cost_usd,
    default_model,
    known_models,
    max_output_tokens,
    model_info,
    normalize,
)


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-opus-4-20250514", "claude-opus-4"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
        ("claude-haiku-4-5@20251001", "claude-haiku-4-5"),
        ("us.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
        ("openrouter/anthropic/claude-opus-4-6", "claude-opus-4-6"),
        ("Claude-Sonnet-4-6", "claude-sonnet-4-6"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4-0613", "gpt-4"),
        ("gpt-4.1-mini", "gpt-4.1-mini"),
        ("gpt-5-codex", "gpt-5"),
        ("gpt-5.6", "gpt-5.6"),
        ("o3-mini-2025-01-31", "o3-mini"),
        ("o4-mini", "o4-mini"),
    ],
)
def test_lookup_by_exact_name_then_longest_prefix(model: str, key: str) -> None:
    info = model_info(model)
    assert info.known
    assert info.name == key


def test_longest_prefix_wins() -> None:
    assert model_info("gpt-4o-mini-search").name == "gpt-4o-mini"
    assert model_info("gpt-5.6-terra-fast").name == "gpt-5.6-terra"
    assert model_info("claude-opus-4-1-thinking").name == "claude-opus-4-1"


def test_a_prefix_does_not_cover_a_newer_version() -> None:
    # "claude-opus-4" ($15/$75) must not price a later 4.x; "gpt-5" must not price gpt-5.3.
    future = model_info("claude-opus-4-9")
    assert future.name == "claude"
    assert future.pricing is None
    assert future.context_window == 200_000
    assert model_info("gpt-5.3-codex").name == "gpt"
    assert model_info("gpt-4o").name == "gpt-4o"  # not "gpt-4" (8k window)
    assert model_info("gpt-4.5-preview").pricing is None


def test_unknown_models_get_a_conservative_default() -> None:
    info = model_info("llama-3.3-70b-instruct")
    assert not info.known
    assert info.context_window == DEFAULT_CONTEXT_WINDOW == 128_000
    assert info.pricing is None
    assert cost_usd("llama-3.3-70b-instruct", Usage(input_tokens=10, output_tokens=10)) is None


def test_windows_and_output_limits() -> None:
    assert context_window("claude-sonnet-4-5") == 200_000
    assert context_window("gpt-4.1") == 1_047_576
    assert context_window("gpt-4o") == 128_000
    assert context_window("claude-opus-4-6") == 1_000_000
    assert max_output_tokens("claude-sonnet-4-5") == 64_000
    assert max_output_tokens("gpt-4o") == 16_384


def test_the_override_replaces_the_window() -> None:
    assert context_window("gpt-4o", 50_000) == 50_000
    assert context_window("unknown-model", 1_000_000) == 1_000_000
    assert context_window("gpt-4o", None) == 128_000
    assert context_window("gpt-4o", 0) == 128_000


def test_cost_of_a_million_tokens_of_each_kind() -> None:
    million = Usage(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_read_input_tokens=1_000_000,
        cache_creation_input_tokens=1_000_000,
    )
    # 3 + 15 + 0.30 (read, 0.1x) + 3.75 (5-minute write, 1.25x)
    assert cost_usd("claude-sonnet-4-5-20250929", million) == pytest.approx(22.05)
    # 2.50 + 10 + 1.25 cached + 2.50 (OpenAI bills cache writes as input)
    assert cost_usd("gpt-4o", million) == pytest.approx(16.25)


def test_cost_of_a_small_turn() -> None:
    usage = Usage(input_tokens=1_000, output_tokens=500, cache_read_input_tokens=10_000)
    # (1000 * 2 + 500 * 8 + 10000 * 0.5) / 1e6
    assert cost_usd("gpt-4.1", usage) == pytest.approx(0.011)
    assert cost_usd("claude-opus-4-1", Usage()) == 0.0


def test_default_models_are_in_the_table() -> None:
    for provider in ("anthropic", "openai"):
        info = model_info(default_model(provider))
        assert info.known
        assert info.name == default_model(provider)
        assert info.pricing is not None
    assert default_model("anthropic").startswith("claude-")
    with pytest.raises(ValueError, match="nope"):
        default_model("nope")


def test_the_table_is_sane() -> None:
    names = known_models()
    assert "claude-haiku-4-5" in names
    assert "gpt" not in names
    for name in names:
        info = model_info(name)
        assert info.name == name
        assert 0 < info.max_output <= info.context_window
        assert info.pricing is not None
        p = info.pricing
        assert 0 < p.input <= p.output
        assert 0 <= p.cache_read <= p.input <= p.cache_write


def test_normalize() -> None:
    assert normalize(" GPT-4o-2024-11-20 ") == "gpt-4o"
    assert normalize("anthropic/claude-sonnet-4-5") == "claude-sonnet-4-5"
    assert normalize("gpt-4") == "gpt-4"
