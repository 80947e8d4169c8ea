"""Provider adapters behind `core.provider.Provider`, and the helpers they share.

Importing this package is cheap: each adapter imports its SDK only when first used.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Mapping
from typing import Any

from peri_cli.core.provider import RAW_INPUT_KEY, Provider

PROVIDERS = ("anthropic", "openai", "scripted")


def make_provider(
    name: str,
    *,
    default_model: str | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
) -> Provider:
    """The provider called `name`; an unset key or URL falls back to the SDK's env variables."""
    if name == "anthropic":
        from peri_cli.providers.anthropic import AnthropicProvider

        return AnthropicProvider(default_model, api_key=api_key, base_url=base_url)
    if name == "openai":
        from peri_cli.providers.openai import OpenAIProvider

        return OpenAIProvider(default_model, api_key=api_key, base_url=base_url)
    if name == "scripted":
        from peri_cli.providers.scripted import ScriptedProvider

        return ScriptedProvider([])
    raise ValueError(f"unknown provider {name!r}; choose one of {', '.join(PROVIDERS)}")


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
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def scrub(text: str, secrets: list[str | None]) -> str:
    """`text` with every secret replaced, so no key reaches an error message."""
    for secret in secrets:
        if isinstance(secret, str) and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


RETRYABLE_STATUS = frozenset({408, 429})


def is_retryable_status(status: int) -> bool:
    """429, 408 and every 5xx (incl. Anthropic's 529 overloaded) are worth another try."""
    return status in RETRYABLE_STATUS or status >= 500
