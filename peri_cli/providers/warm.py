"""Which provider SDK a face starts loading before its settings are read (`prestart`'s worker
imports it on another core), and what that import covers.

Only the standard library is imported here: this runs before the rest of Peri loads."""

from __future__ import annotations

from collections.abc import Mapping

# What the first request imports besides the SDK package: the HTTP stack's asyncio side, which
# the SDKs load lazily on their first request.
SDK_MODULES = {
    "anthropic": ("anthropic", "anyio._backends._asyncio", "httpcore2"),
    "openai": ("openai", "anyio._backends._asyncio", "httpcore2"),
}


def guess_provider(flag: str | None, env: Mapping[str, str]) -> str:
    """The provider a run will most likely use, before its settings are read: the flag, then
    PERI_PROVIDER, then the keys in the environment (the rule `choose_provider` ends with). A
    settings file naming another provider makes this guess wrong: that costs the wasted import,
    never a wrong answer (the run imports what it needs itself)."""
    if flag:
        return flag
    named = env.get("PERI_PROVIDER", "").strip()
    if named in SDK_MODULES:
        return named
    anthropic = env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_BASE_URL")
    if not anthropic and (env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL")):
        return "openai"
    return "anthropic"
