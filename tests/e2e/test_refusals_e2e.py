"""Issue 37 item 10 end to end: the real `peri -p`, both SDKs, the errors the real APIs send.
A prompt refused for its content is not sent again (this run's session, resumed with `-c`); a
context-length 400 gets one compaction and one retry; 401/404 keep the prompt and say what to
fix. Every error line says what to do next."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.e2e.conftest import Peri, texts

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
# what each API answers for an image it will not take, and for a request over the window
IMAGE_REFUSED = {
    "anthropic": {
        "status": 400,
        "message": "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: "
        "7340032 bytes > 5242880 bytes",
    },
    "openai": {
        "status": 400,
        "code": "invalid_image_format",
        "message": "You uploaded an unsupported image. Please make sure your image has of one "
        "the following formats: ['png', 'jpeg', 'gif', 'webp'].",
    },
}
TOO_LONG = {
    "anthropic": {"status": 400, "message": "prompt is too long: 210000 tokens > 200000 maximum"},
    "openai": {
        "status": 400,
        "code": "context_length_exceeded",
        "message": "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 130000 tokens. Please reduce the length of the messages.",
    },
}
LEFT_OUT = (
    "This prompt is left out of the conversation, so it is not sent again: change it, or what "
    "it attaches, and send it again."
)
KEPT = "Your prompt is kept: once that is fixed, your next message in this session sends it again."


def _work_session(peri: Peri) -> None:
    peri.server.set_script([{"text": "the work is done"}])
    assert not peri.json("-p", "the real work")["is_error"]


def _has_image(body: dict[str, Any]) -> bool:
    """An image block in a message: Anthropic's `image`, OpenAI's `image_url`."""
    return any(
        isinstance(block, dict) and block.get("type") in ("image", "image_url")
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
    )


def test_a_refused_image_prompt_is_not_sent_again(peri: Peri, provider: str) -> None:
    peri.provider = provider
    (peri.workspace / "shot.png").write_bytes(PNG)
    _work_session(peri)
    peri.server.set_script([IMAGE_REFUSED[provider]])
    done = peri.run("-c", "-p", "what is in @shot.png")
    assert done.returncode == 1
    (refused,) = [r for r in peri.server.requests if r["status"] == 400]
    assert _has_image(refused["body"])  # the attachment went, and was refused
    assert done.stderr.strip().endswith(LEFT_OUT)
    assert IMAGE_REFUSED[provider]["message"][:30] in done.stderr
    peri.server.set_script([{"text": "carrying on"}])
    again = peri.json("-c", "-p", "go on without it")
    assert not again["is_error"]
    last = peri.model_calls()[-1]
    sent = texts(last)[1:] if provider == "openai" else texts(last)  # (its system message)
    assert sent == ["the real work", "the work is done", "go on without it"]
    assert not _has_image(last)


def test_a_413_prompt_is_not_sent_again(peri: Peri) -> None:
    _work_session(peri)
    peri.server.set_script([{"status": 413, "message": "Request exceeds the maximum size"}])
    result = peri.json("-c", "-p", "a huge paste")
    assert result["is_error"] and result["error"].endswith(LEFT_OUT)
    peri.server.set_script([{"text": "ok"}])
    peri.json("-c", "-p", "a small one")
    assert texts(peri.model_calls()[-1]) == ["the real work", "the work is done", "a small one"]


def test_a_context_length_400_compacts_once_and_retries(peri: Peri, provider: str) -> None:
    peri.provider = provider
    _work_session(peri)
    summary = {"text": "<summary>Goal: the real work, then the long question.</summary>"}
    peri.server.set_script([TOO_LONG[provider], summary, {"text": "answered after compacting"}])
    result = peri.json("-c", "-p", "a long question")
    assert not result["is_error"] and result["result"] == "answered after compacting"
    statuses = [r["status"] for r in peri.server.requests][-3:]
    assert statuses == [400, 200, 200]
    summary_call, retry = peri.model_calls()[-2:]
    assert not summary_call.get("tools") and retry.get("tools")
    assert "Goal: the real work" in "\n".join(texts(retry))


def test_a_context_length_400_after_the_retry_leaves_the_prompt_out(peri: Peri) -> None:
    _work_session(peri)
    summary = {"text": "<summary>Goal: the real work.</summary>"}
    peri.server.set_script([TOO_LONG["anthropic"], summary, TOO_LONG["anthropic"]])
    done = peri.run("-c", "-p", "far too long")
    assert done.returncode == 1
    assert done.stderr.strip().endswith(
        "This prompt is left out of the conversation, so it is not sent again: shorten it, or "
        "free room with /compact or /clear, and send it again."
    )
    assert [r["status"] for r in peri.server.requests][-3:] == [400, 200, 400]  # one compaction


@pytest.mark.parametrize(
    ("item", "fix"),
    [
        ({"status": 401}, "check ANTHROPIC_API_KEY"),
        (
            {"status": 404, "message": "model: claude-nope"},
            "check the model name claude-nope (/model, --model or PERI_MODEL) and "
            "ANTHROPIC_BASE_URL",
        ),
    ],
    ids=["401", "404"],
)
def test_401_and_404_keep_the_prompt_and_say_what_to_fix(
    peri: Peri, item: dict[str, Any], fix: str
) -> None:
    _work_session(peri)
    peri.server.set_script([item])
    done = peri.run("-c", "-p", "keep this prompt", "--model", "claude-nope")
    assert done.returncode == 1
    assert done.stderr.strip().endswith(f"{fix}. {KEPT}")
    peri.server.set_script([{"text": "now it works"}])
    peri.json("-c", "-p", "fixed")
    sent = texts(peri.model_calls()[-1])
    assert sent[2] == "keep this prompt" and sent[-1] == "fixed"
