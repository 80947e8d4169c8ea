"""The provider SDK a face's worker loads ahead (`peri -p`, `peri acp`, `peri mcp serve`)."""

from __future__ import annotations

import pytest

from peri_cli.providers.warm import guess_provider


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
