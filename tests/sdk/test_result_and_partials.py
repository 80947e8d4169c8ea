"""What the door adds for a face that shows Peri to a person: the model's stop reason on the
result (never on its `stream-json` line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from peri_cli.sdk import PeriClient, PeriError, PeriOptions, ResultEvent, query
from tests.fakeserver import FakeServer
from tests.sdk.conftest import options_for


@pytest.mark.parametrize("stop", ["max_tokens", "refusal", "end_turn"])
async def test_the_result_carries_the_models_stop_reason_off_its_line(
    server: FakeServer, tmp_path: Path, stop: str
) -> None:
    server.set_script([{"text": "so far", "stop_reason": stop}])
    events = [e async for e in query("hi", options_for(server, tmp_path))]
    result = events[-1]
    assert isinstance(result, ResultEvent)
    assert result.stop_reason == stop
    assert "stop_reason" not in json.loads(result.to_json())
    assert "stop_reason" not in result.to_dict()


async def test_listing_models_without_a_key_keeps_the_credentials_problem(tmp_path: Path) -> None:
    options = PeriOptions(
        cwd=tmp_path,
        peri_home=tmp_path / ".peri",
        provider="anthropic",
        env={"HOME": str(tmp_path), "ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""},
    )
    async with PeriClient(options) as client:
        assert "ANTHROPIC_API_KEY" in (client.credentials_problem or "")
        await client.list_models()  # an editor's session/new asks for the model option
        assert "ANTHROPIC_API_KEY" in (client.credentials_problem or "")
        with pytest.raises(PeriError, match="ANTHROPIC_API_KEY"):
            await client.send("hi")
