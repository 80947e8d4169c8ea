"""Importing a provider's SDK in a background thread, so that import overlaps Peri's own start.

The SDK is by far the heaviest import of a run (`import anthropic` alone loads ~3,000 modules);
Peri cannot answer before it is loaded, but reading settings, guides and the transcript need not
wait for it. Only the faces that are about to send a request start this (`peri -p`, `peri acp`):
importing `peri_cli.sdk` imports no SDK.

Two threads importing the same package at once can deadlock (one holds `pkg.sub` while it
imports `pkg`, the other holds `pkg` while its `__init__` imports `pkg.sub`; Python then raises
in one of them). So the packages both Peri's start and the SDK import are imported first, on the
caller's thread (pydantic and asyncio already are: `peri_cli.providers` imports them), and the
thread then loads only what Peri's own modules do not.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Mapping

# What the first request imports besides the SDK package: the HTTP stack's asyncio side, which
# the SDKs load lazily on their first request.
SDK_MODULES = {
    "anthropic": ("anthropic", "anyio._backends._asyncio", "httpcore2"),
    "openai": ("openai", "anyio._backends._asyncio", "httpcore2"),
}

# Loaded by both Peri's start-up (`-p`, or `acp` with the `acp` package) and the SDKs (anthropic
# 2.15, openai 3.57); the run needs each of them anyway, so importing them first costs nothing.
_SHARED = (
    "email.message",
    "email.parser",
    "http.client",
    "importlib.metadata",
    "importlib.resources",
    "tempfile",
    "zipfile",
    "pydantic.type_adapter",
    "pydantic.plugin._loader",
)
_SHARED_BY = {"anthropic": ("opentelemetry.trace",)}  # also imported by the `acp` package

_started: dict[str, threading.Thread] = {}
_lock = threading.Lock()


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


def warm(provider: str) -> threading.Thread | None:
    """Start importing `provider`'s SDK in a daemon thread (once per process); None for a
    provider without an SDK. Whoever imports it later waits for this import, not a second one."""
    modules = SDK_MODULES.get(provider)
    if modules is None:
        return None
    with _lock:
        thread = _started.get(provider)
        if thread is None:
            for name in (*_SHARED, *_SHARED_BY.get(provider, ())):
                with contextlib.suppress(ImportError):  # opentelemetry is optional
                    importlib.import_module(name)
            thread = threading.Thread(
                target=_import_all, args=(modules,), name=f"peri-warm-{provider}", daemon=True
            )
            _started[provider] = thread
            thread.start()
    return thread


def _import_all(modules: tuple[str, ...]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # a missing or broken SDK: the request that needs it reports it
            return
