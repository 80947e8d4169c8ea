"""Issue 37 item 10 at the adapters: what a provider's refusal is, read from what the real SDKs
raise for the bodies the real APIs send (through the loopback fake server). A context-length
400 is marked `too_long` (the loop compacts once and retries); a 400/413 about the request's
content is not; 401/403/404 say what to fix (the key's variable, the model name)."""

from __future__ import annotations

from typing import Any

import pytest

from peri_cli.base.messages import user_text
from peri_cli.base.provider import ModelRequest, Provider, ProviderError
from peri_cli.providers.anthropic.provider import AnthropicProvider
from peri_cli.providers.openai.provider import OpenAIProvider
from peri_cli.providers.wire import dump_error, load_error
from tests.fakeserver import FakeServer
from tests.providers.streams import collect

KEY = "sk-FAKE-KEY-do-not-leak-4242"

# (item, too_long, status) as each API sends them
ANTHROPIC: list[tuple[dict[str, Any], bool, int]] = [
    ({"status": 400, "message": "prompt is too long: 210000 tokens > 200000 maximum"}, True, 400),
    (
        {
            "status": 400,
            "message": "input length and `max_tokens` exceed context limit: 197626 + 21333 > "
            "200000, decrease input length or `max_tokens` and try again",
        },
        True,
        400,
    ),
    (
        {
            "status": 400,
            "message": "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: "
            "7340032 bytes > 5242880 bytes",
        },
        False,
        400,
    ),
    ({"status": 400, "message": "The PDF specified was not valid."}, False, 400),
    (
        {"status": 413, "message": "Request exceeds the maximum allowed number of bytes."},
        False,
        413,
    ),
]
OPENAI: list[tuple[dict[str, Any], bool, int]] = [
    (
        {
            "status": 400,
            "code": "context_length_exceeded",
            "message": "This model's maximum context length is 128000 tokens. However, your "
            "messages resulted in 130000 tokens. Please reduce the length of the messages.",
        },
        True,
        400,
    ),
    (  # vLLM: no code, the same sentence
        {
            "status": 400,
            "kind": "BadRequestError",
            "message": "This model's maximum context length is 4096 tokens. However, you "
            "requested 5000 tokens (4000 in the messages, 1000 in the completion). Please "
            "reduce the length of the messages or completion.",
        },
        True,
        400,
    ),
    (  # llama.cpp's server
        {
            "status": 400,
            "kind": "exceed_context_size_error",
            "message": "the request exceeds the available context size, try increasing it",
        },
        True,
        400,
    ),
    (
        {
            "status": 400,
            "code": "invalid_image_format",
            "message": "You uploaded an unsupported image. Please make sure your image has of "
            "one the following formats: ['png', 'jpeg', 'gif', 'webp'].",
        },
        False,
        400,
    ),
    ({"status": 413, "message": "Request Entity Too Large"}, False, 413),
]


def _provider(name: str, server: FakeServer) -> Provider:
    if name == "anthropic":
        return AnthropicProvider("claude-test", api_key=KEY, base_url=server.url)
    return OpenAIProvider("gpt-test", api_key=KEY, base_url=server.openai_url)


def _request(model: str) -> ModelRequest:
    return ModelRequest(
        model=model, frozen_system="s", dynamic_system="", messages=[user_text("hi")]
    )


async def _error(name: str, server: FakeServer, item: dict[str, Any]) -> ProviderError:
    server.set_script([item])
    model = "claude-test" if name == "anthropic" else "gpt-test"
    with pytest.raises(ProviderError) as error:
        await collect(_provider(name, server), _request(model))
    return error.value


@pytest.mark.parametrize(
    ("name", "item", "too_long", "status"),
    [("anthropic", *case) for case in ANTHROPIC] + [("openai", *case) for case in OPENAI],
)
async def test_a_context_length_refusal_is_told_from_a_refusal_of_content(
    server: FakeServer, name: str, item: dict[str, Any], too_long: bool, status: int
) -> None:
    error = await _error(name, server, item)
    assert error.too_long is too_long
    assert error.status == status and not error.retryable
    assert item["message"][:40] in str(error)  # the provider's reason is shown
    assert load_error(dump_error(error)).too_long is too_long  # across the stream worker's pipe


@pytest.mark.parametrize(
    ("name", "variable"), [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")]
)
async def test_403_says_which_key_and_model(server: FakeServer, name: str, variable: str) -> None:
    item = {"status": 403, "message": "Your key does not have permission to use this."}
    error = await _error(name, server, item)
    model = "claude-test" if name == "anthropic" else "gpt-test"
    assert f"check that {variable} may use the model {model}" in str(error)
    assert KEY not in str(error)


@pytest.mark.parametrize(
    ("name", "message", "base"),
    [
        ("anthropic", "model: claude-test", "ANTHROPIC_BASE_URL"),
        (
            "openai",
            "The model `gpt-test` does not exist or you do not have access to it.",
            "OPENAI_BASE_URL",
        ),
    ],
)
async def test_404_says_to_check_the_model_name(
    server: FakeServer, name: str, message: str, base: str
) -> None:
    error = await _error(name, server, {"status": 404, "message": message})
    model = "claude-test" if name == "anthropic" else "gpt-test"
    assert message in str(error)
    fix = f"check the model name {model} (/model, --model or PERI_MODEL) and {base}"
    assert fix in str(error)
