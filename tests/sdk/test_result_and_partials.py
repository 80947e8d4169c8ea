"""What the door adds for a face that shows Peri to a person: the model's stop reason on the
result (never on its `stream-json` line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from peri_cli.sdk import ResultEvent, query
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

