"""What the provider adapters share: parsing tool input and retry headers, scrubbing secrets
from error text, model lists."""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import re
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from peri_cli.base.provider import RAW_INPUT_KEY, ProviderError
from peri_cli.base.redact import redact_url, url_secrets


def parse_tool_input(text: str) -> dict[str, Any]:
    """Streamed tool arguments as a dict; anything but a JSON object stays raw (RAW_INPUT_KEY)."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {RAW_INPUT_KEY: text}
    return value if isinstance(value, dict) else {RAW_INPUT_KEY: text}


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms` / `retry-after` (seconds or an HTTP date), if any."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            seconds = float(millis) / 1000
        except ValueError:
            pass
        else:
            if math.isfinite(seconds):
                return max(0.0, seconds)
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError, OSError):
        return None
    return max(0.0, when - time.time())


def scrub(text: str, secrets: Sequence[str | None]) -> str:
    """`text` with every secret replaced, so no key reaches an error message."""
    for secret in secrets:
        if isinstance(secret, str) and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def check_base_url(url: str | None, variable: str) -> None:
    """Refuse a base URL the HTTP stack would choke on later, in one line without its password.

    (An out-of-range port, say, surfaces deep in the transport as an exception group.)
    """
    if not url:
        return
    problem = None
    try:
        parts = urllib.parse.urlsplit(url.strip())
        if parts.scheme not in ("http", "https"):
            problem = "it must start with http:// or https://"
        elif not parts.hostname:
            problem = "it names no host"
        else:
            _ = parts.port  # raises for a port out of range or not a number
    except ValueError:  # its text may quote a piece of the password: not shown
        problem = "its host or port cannot be read (in a password, write / ? # @ : as %2F …)"
    if problem:
        shown = scrub(redact_url(url), url_secrets(url))
        raise ProviderError(f"{variable} {shown!r} is not a usable URL: {problem}")


def scrub_provider_text(text: str, keys: list[str | None], base_urls: list[str | None]) -> str:
    """`text` safe to show: URL credentials redacted, then keys and base-URL passwords scrubbed."""
    secrets: list[str | None] = list(keys)
    for url in base_urls:
        secrets += url_secrets(url)
    return scrub(redact_url(text), secrets)


# How APIs and compatible servers say a request is longer than the model's window: Anthropic
# ("prompt is too long", "exceed context limit"), OpenAI and vLLM ("maximum context length",
# `context_length_exceeded`), llama.cpp ("exceeds the available context size"), Gemini's
# OpenAI door ("input token count (N) exceeds").
_TOO_LONG = re.compile(
    r"prompt is too long|exceeds? (?:the )?context|context[ _](?:length|window|size|limit)"
    r"|maximum context|input token count .{0,40}exceeds",
    re.IGNORECASE,
)


def is_too_long(status: int, *texts: str | None) -> bool:
    """A 400 whose message, code or type says the request does not fit the context window."""
    return status == 400 and any(text and _TOO_LONG.search(text) for text in texts)


def what_to_fix(status: int, model: str, key_variable: str, url_variable: str) -> str:
    """For a 403 or 404, what to check (their own text rarely says); "" for other statuses."""
    if status == 403:
        return f"check that {key_variable} may use the model {model}"
    if status == 404:
        return f"check the model name {model} (/model, --model or PERI_MODEL) and {url_variable}"
    return ""


RETRYABLE_STATUS = frozenset({408, 429})


def is_retryable_status(status: int) -> bool:
    """429, 408 and every 5xx (incl. Anthropic's 529 overloaded) are worth another try."""
    return status in RETRYABLE_STATUS or status >= 500


MODELS_TIMEOUT = 10.0  # `/model` waits for the list; an unreachable server must not stall it
MAX_MODELS = 5000  # a server listing more is paged through no further


class ModelListCache:
    """The provider's model list, asked once per provider instance (concurrent askers share it).

    A failed ask is an answer too (None: no list); only a cancelled one is asked again.
    """

    def __init__(self) -> None:
        self._asked = False
        self._models: list[str] | None = None
        self._lock = asyncio.Lock()

    async def get(self, fetch: Callable[[], Awaitable[list[str] | None]]) -> list[str] | None:
        async with self._lock:
            if not self._asked:
                self._models = await fetch()
                self._asked = True
        return None if self._models is None else list(self._models)


def with_aliases(names: list[str], aliases: Callable[[str], list[str]]) -> list[str]:
    """`names` in order, then the aliases they imply that the server did not list itself."""
    out = list(dict.fromkeys(names))
    known = set(out)
    for name in names:
        for alias in aliases(name):
            if alias not in known:
                known.add(alias)
                out.append(alias)
    return out
