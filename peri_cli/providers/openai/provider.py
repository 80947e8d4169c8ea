"""The OpenAI client behind the Provider port: streaming a request (the SDK's own retries off),
mapping the SDK's errors to ProviderError (keys and URLs scrubbed), and listing the models."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from peri_cli.base.provider import ModelRequest, ProviderError, StreamEvent, StreamInterrupted
from peri_cli.providers.common import (
    MAX_MODELS,
    MODELS_TIMEOUT,
    ModelListCache,
    check_base_url,
    is_retryable_status,
    is_too_long,
    parse_retry_after,
    scrub_provider_text,
    what_to_fix,
    with_aliases,
)
from peri_cli.providers.openai.request import DEFAULT_MODEL, build_params
from peri_cli.providers.openai.stream import MALFORMED, StreamedReply

if TYPE_CHECKING:
    from openai import AsyncOpenAI

PLACEHOLDER_KEY = (
    "not-needed"  # local servers need no key, but the SDK refuses to start without one
)
MAX_DETAIL = 500  # a proxy's HTML error page is not a message


class OpenAIProvider:
    """Streams Chat Completions; Peri retries itself, so the SDK's own retries are off."""

    name = "openai"

    def __init__(
        self,
        default_model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
    ) -> None:
        self.default_model = default_model or DEFAULT_MODEL
        self._api_key = api_key
        self._base_url = base_url
        self._client: AsyncOpenAI | None = None
        self._models = ModelListCache()

    def _get_client(self) -> AsyncOpenAI:
        if self._client is None:
            from openai import AsyncOpenAI, OpenAIError

            key = self._api_key or os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_KEY
            check_base_url(self._base_url or os.environ.get("OPENAI_BASE_URL"), "OPENAI_BASE_URL")
            try:
                self._client = AsyncOpenAI(api_key=key, base_url=self._base_url, max_retries=0)
            except (OpenAIError, ValueError) as e:  # e.g. an OPENAI_BASE_URL httpx cannot parse
                raise ProviderError(self._scrub(f"cannot use the OpenAI API: {e}")) from e
        return self._client

    def _scrub(self, text: str) -> str:
        in_use = getattr(self._client, "api_key", None)
        keys = [self._api_key, in_use, os.environ.get("OPENAI_API_KEY")]
        return scrub_provider_text(text, keys, [self._base_url, os.environ.get("OPENAI_BASE_URL")])

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Yield deltas as they arrive and end with MessageCompleted, or raise ProviderError."""
        import httpx2
        import openai

        client = self._get_client()
        params = build_params(request, self.default_model, official=_is_official(client))
        turn = StreamedReply()
        try:
            chunks = await client.chat.completions.create(
                **params, stream=True, stream_options={"include_usage": True}
            )
        except openai.OpenAIError as e:
            raise self._map_error(e, params["model"]) from e
        except (httpx2.HTTPError, httpx2.InvalidURL) as e:  # what the SDK does not wrap
            raise ProviderError(self._scrub(f"OpenAI API request failed: {e}")) from e
        try:
            async with chunks:
                async for chunk in chunks:
                    for out in turn.feed(chunk):
                        yield out
        # Once the reply is flowing, a dropped connection is an interrupted turn (the SDK wraps
        # it in APIConnectionError, or lets the transport error through).
        except (openai.APIConnectionError, httpx2.TransportError) as e:
            raise StreamInterrupted(f"the connection dropped mid-reply ({type(e).__name__})") from e
        except json.JSONDecodeError as e:  # a garbled `data:` line: the stream is as good as cut
            raise StreamInterrupted(MALFORMED + " (not valid JSON)") from e
        except openai.OpenAIError as e:
            raise self._map_error(e, params["model"]) from e
        for out in turn.finish():
            yield out

    async def list_models(self) -> list[str] | None:
        """The server's `GET /models` ids (Ollama's `name:latest` also as `name`); None without."""
        return await self._models.get(self._fetch_models)

    async def _fetch_models(self) -> list[str] | None:
        import httpx2
        import openai

        try:
            names: list[str] = []
            async for model in self._get_client().models.list(timeout=MODELS_TIMEOUT):
                if isinstance(getattr(model, "id", None), str) and model.id:
                    names.append(model.id)
                if len(names) >= MAX_MODELS:
                    break
        # No list, or none we can read: the server may still serve any name.
        except (ProviderError, openai.OpenAIError, httpx2.HTTPError, httpx2.InvalidURL):
            return None
        except (ValueError, TypeError, AttributeError):  # a list of the wrong shape
            return None
        return with_aliases(names, _model_aliases) if names else None

    def _map_error(self, e: Exception, model: str) -> ProviderError:
        import openai

        if isinstance(e, openai.APITimeoutError):
            return ProviderError("OpenAI API request timed out", retryable=True)
        if isinstance(e, openai.APIConnectionError):
            where = self._scrub(str(self._client.base_url if self._client else self._base_url))
            return ProviderError(f"could not reach the OpenAI API at {where}", retryable=True)
        if isinstance(e, openai.APIStatusError):
            status = e.status_code
            detail = (_error_detail(e.body) or e.message)[:MAX_DETAIL]
            if status == 401:
                message = "the server rejected the API key (401): check OPENAI_API_KEY"
            else:
                message = f"OpenAI API error {status}: {detail}"
                if fix := what_to_fix(status, model, "OPENAI_API_KEY", "OPENAI_BASE_URL"):
                    message += f": {fix}"
            return ProviderError(
                self._scrub(message),
                retryable=is_retryable_status(status),
                retry_after=parse_retry_after(e.response.headers),
                status=status,
                too_long=is_too_long(status, detail, *_error_kind(e.body)),
            )
        if isinstance(e, openai.APIError):  # an error object inside the stream
            body = e.body if isinstance(e.body, dict) else {}
            invalid = body.get("type") == "invalid_request_error"
            return ProviderError(
                self._scrub(f"OpenAI API error in the stream: {e.message}"), retryable=not invalid
            )
        return ProviderError(self._scrub(f"OpenAI API error: {e}"))


def _model_aliases(name: str) -> list[str]:
    """Ollama serves `llama3.2:latest` to a request for `llama3.2` too."""
    return [name.removesuffix(":latest")] if name.endswith(":latest") else []


def _error_detail(body: object) -> str | None:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return None


def _error_kind(body: object) -> tuple[str | None, str | None]:
    """The error's `code` and `type` (`context_length_exceeded`, llama.cpp's
    `exceed_context_size_error`), when the body has them."""
    error = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None, None
    code, kind = error.get("code"), error.get("type")
    return (code if isinstance(code, str) else None), (kind if isinstance(kind, str) else None)


def _is_official(client: AsyncOpenAI) -> bool:
    return client.base_url.host == "api.openai.com"
