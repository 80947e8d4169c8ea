"""Choosing a provider adapter by name. Each adapter imports its SDK only when first used."""

from __future__ import annotations

from peri_cli.base.provider import Provider

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
        from peri_cli.providers.anthropic.provider import AnthropicProvider

        return AnthropicProvider(default_model, api_key=api_key, base_url=base_url)
    if name == "openai":
        from peri_cli.providers.openai.provider import OpenAIProvider

        return OpenAIProvider(default_model, api_key=api_key, base_url=base_url)
    if name == "scripted":
        from peri_cli.providers.scripted import ScriptedProvider

        return ScriptedProvider([])
    raise ValueError(f"unknown provider {name!r}; choose one of {', '.join(PROVIDERS)}")
