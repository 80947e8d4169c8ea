"""The Anthropic client behind the Provider port: streaming a request, mapping the SDK's errors
to ProviderError (keys and URLs scrubbed), and listing the models with their aliases."""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from peri_cli.base.provider import ModelRequest, ProviderError, StreamEvent, StreamInterrupted
from peri_cli.providers.anthropic.request import DEFAULT_MODEL, build_params
from peri_cli.providers.anthropic.stream import MALFORMED, StreamedReply
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

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

MAX_DETAIL = 500  # a proxy's HTML error page is not a message
_DATED = re.compile(r"^(?P<stem>.+)-(?P<date>\d{8})$")
_LONE_MAJOR = re.compile(r"[A-Za-z]-\d+$")  # claude-sonnet-4 (alias claude-sonnet-4-0)

# In-stream `error` events arrive on a 200 response; their type tells the status it stands for.
_STREAM_ERROR_STATUS = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500}


class AnthropicProvider:
    """Streams Messages API replies; Peri retries itself, so the SDK's own retries are off."""

    name = "anthropic"

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
        self._client: AsyncAnthropic | None = None
        self._models = ModelListCache()

    def _get_client(self) -> AsyncAnthropic:
        if self._client is None:
            from anthropic import AnthropicError, AsyncAnthropic

            url = self._base_url or os.environ.get("ANTHROPIC_BASE_URL")
            check_base_url(url, "ANTHROPIC_BASE_URL")
            try:
                self._client = AsyncAnthropic(
                    api_key=self._api_key, base_url=self._base_url, max_retries=0
                )
            except AnthropicError as e:  # no key, and the SDK's profile lookup failed too
                raise _no_credentials() from e
        return self._client

    def _scrub(self, text: str) -> str:
        in_use = getattr(self._client, "api_key", None)
        keys = [self._api_key, in_use, os.environ.get("ANTHROPIC_API_KEY")]
        urls = [self._base_url, os.environ.get("ANTHROPIC_BASE_URL")]
        return scrub_provider_text(text, keys, urls)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Yield deltas as they arrive and end with MessageCompleted, or raise ProviderError."""
        import anthropic
        import httpx2

        client = self._get_client()
        params = build_params(request, self.default_model)
        turn = StreamedReply()
        try:
            events = await client.messages.create(**params, stream=True)
        except TypeError as e:  # how the SDK says it found no credentials at all
            if "authentication" not in str(e):
                raise
            raise _no_credentials() from e
        except anthropic.AnthropicError as e:
            raise self._map_error(e, params["model"]) from e
        except (httpx2.HTTPError, httpx2.InvalidURL) as e:  # what the SDK does not wrap
            raise ProviderError(self._scrub(f"Anthropic API request failed: {e}")) from e
        try:
            async with events:
                async for event in events:
                    for out in turn.feed(event):
                        yield out
        # Once the reply is flowing, a dropped connection is an interrupted turn (the SDK lets the
        # transport error through; wrapped as APIConnectionError it means the same).
        except (anthropic.APIConnectionError, httpx2.TransportError) as e:
            raise StreamInterrupted(f"the connection dropped mid-reply ({type(e).__name__})") from e
        except json.JSONDecodeError as e:  # a garbled `data:` line: the stream is as good as cut
            raise StreamInterrupted(MALFORMED + " (not valid JSON)") from e
        except anthropic.AnthropicError as e:
            raise self._map_error(e, params["model"]) from e
        yield turn.finish()

    async def list_models(self) -> list[str] | None:
        """The API's model ids, with the aliases dated ids imply; None without a list."""
        return await self._models.get(self._fetch_models)

    async def _fetch_models(self) -> list[str] | None:
        import anthropic
        import httpx2

        try:
            names: list[str] = []
            pages = self._get_client().models.list(limit=1000, timeout=MODELS_TIMEOUT)
            async for model in pages:
                if isinstance(getattr(model, "id", None), str) and model.id:
                    names.append(model.id)
                if len(names) >= MAX_MODELS:
                    break
        # No list, or none we can read: the server may still serve any name.
        except (ProviderError, anthropic.AnthropicError, httpx2.HTTPError, httpx2.InvalidURL):
            return None
        except (ValueError, TypeError, AttributeError):  # a list of the wrong shape
            return None
        return with_aliases(names, model_aliases) if names else None

    def _map_error(self, e: Exception, model: str) -> ProviderError:
        import anthropic

        if isinstance(e, anthropic.APITimeoutError):
            return ProviderError("Anthropic API request timed out", retryable=True)
        if isinstance(e, anthropic.APIConnectionError):
            return ProviderError(
                f"could not reach the Anthropic API at {self._base_url_text()}", retryable=True
            )
        if isinstance(e, anthropic.APIStatusError):
            kind = str(e.type or "")  # `error.type` / `error.message` of the body, when present
            detail = (e.api_message or e.message)[:MAX_DETAIL]
            status = e.status_code
            if status == 200:  # an `error` event inside the stream
                status = _STREAM_ERROR_STATUS.get(kind, 400)
            if status == 401:
                message = (
                    "Anthropic rejected the API key (401 authentication_error): "
                    "check ANTHROPIC_API_KEY"
                )
            else:
                message = f"Anthropic API error {status} {kind or 'error'}: {detail}"
                if fix := what_to_fix(status, model, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
                    message += f": {fix}"
            return ProviderError(
                self._scrub(message),
                retryable=is_retryable_status(status),
                retry_after=parse_retry_after(e.response.headers),
                status=status,
                too_long=is_too_long(status, detail, kind),
            )
        return ProviderError(self._scrub(f"Anthropic API error: {e}"))

    def _base_url_text(self) -> str:
        return self._scrub(str(self._client.base_url if self._client else self._base_url))


def model_aliases(name: str) -> list[str]:
    """The aliases the API takes for a dated id: `claude-sonnet-4-5-20250929` answers to
    `claude-sonnet-4-5` and `-latest`; `claude-sonnet-4-20250514` to `claude-sonnet-4-0` too."""
    dated = _DATED.match(name)
    if not dated:
        return []
    stem = dated["stem"]
    aliases = [stem, f"{stem}-latest"]
    if _LONE_MAJOR.search(stem):
        aliases.append(f"{stem}-0")
    return aliases


def _no_credentials() -> ProviderError:
    return ProviderError("no Anthropic credentials: set ANTHROPIC_API_KEY")
