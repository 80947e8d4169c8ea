"""The provider SDK imported ahead in a thread (`peri -p`, `peri acp`): which SDK, and once."""

from __future__ import annotations

import sys

import pytest

from peri_cli.providers.warm import guess_provider, warm


@pytest.mark.parametrize(
    ("flag", "env", "expected"),
    [
        ("openai", {"ANTHROPIC_API_KEY": "k"}, "openai"),  # the flag first
        (None, {"PERI_PROVIDER": "openai", "ANTHROPIC_API_KEY": "k"}, "openai"),
        (None, {"PERI_PROVIDER": "bogus", "OPENAI_API_KEY": "k"}, "openai"),  # settings reject it
        (None, {"OPENAI_BASE_URL": "http://x"}, "openai"),
        (None, {"OPENAI_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://x"}, "anthropic"),
        (None, {}, "anthropic"),
    ],
)
def test_the_guess_follows_the_runs_own_rule(
    flag: str | None, env: dict[str, str], expected: str
) -> None:
    assert guess_provider(flag, env) == expected


def test_the_sdk_is_imported_once_in_the_background() -> None:
    first = warm("anthropic")
    assert first is not None and first.daemon
    assert warm("anthropic") is first
    first.join(120)
    assert not first.is_alive() and "anthropic" in sys.modules
    assert "anyio._backends._asyncio" in sys.modules  # what the first request would import
    assert warm("scripted") is None  # no SDK to import
