"""What a prompt may carry (@-mentions, embedded resources, images) and the missing-key error."""

from __future__ import annotations

import json

import pytest
from acp import (
    RequestError,
    embedded_text_resource,
    resource_block,
    resource_link_block,
    text_block,
)
from acp.schema import ImageContentBlock

from peri_cli.acp.transport import check_message
from tests.acp.conftest import Editor, running
from tests.e2e.conftest import Peri

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)


async def test_mentions_resources_and_images_become_the_user_message(
    peri: Peri, editor: Editor
) -> None:
    (peri.workspace / "notes.txt").write_text("mentioned file body\n")
    blocks = [
        text_block("look at"),
        resource_link_block(name="notes.txt", uri=(peri.workspace / "notes.txt").as_uri()),
        resource_block(embedded_text_resource("file:///tmp/snippet.py", "embedded snippet")),
        ImageContentBlock(type="image", mime_type="image/png", data=PNG),
    ]
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=blocks)
    body = next(b for b in peri.model_calls() if b and "messages" in b)
    sent = json.dumps(body["messages"])
    assert "@notes.txt" in sent and "mentioned file body" in sent
    assert "embedded snippet" in sent
    assert '"type": "image"' in sent and PNG in sent


async def test_a_missing_key_is_auth_required_naming_the_variable(
    peri: Peri, editor: Editor
) -> None:
    peri.extra_env = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        with pytest.raises(RequestError) as raised:
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    assert raised.value.code == RequestError.auth_required().code
    assert "ANTHROPIC_API_KEY" in json.dumps(raised.value.data)
    assert not peri.model_calls()
    assert editor.text() == ""


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ([1, 2], -32600),
        ("text", -32600),
        ({"jsonrpc": "2.0", "id": {"x": 1}, "method": "initialize"}, -32600),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, -32600),
        ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": 7}, -32602),
        ({"jsonrpc": "2.0", "id": 1}, -32600),
    ],
)
def test_messages_the_connection_cannot_take_are_answered(message: object, code: int) -> None:
    problem = check_message(message)
    assert problem is not None and problem["error"]["code"] == code


def test_requests_and_responses_pass() -> None:
    assert check_message({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}}) is None
    assert check_message({"jsonrpc": "2.0", "id": 1, "result": {}}) is None
