"""The environment's part of settings: PERI_MODEL, PERI_PROVIDER, PERI_CONTEXT_WINDOW,
DISABLE_COMPACT, DISABLE_AUTO_COMPACT and COMPACT_THRESHOLD, each checked, a bad value a
SettingsError naming the variable."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from peri_cli.base.settings_check import SettingsError, show


def _env_flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() not in ("", "0", "false")


def env_values(env: Mapping[str, str]) -> dict[str, Any]:
    update: dict[str, Any] = {}
    if model := env.get("PERI_MODEL", "").strip():
        update["model"] = model
    if provider := env.get("PERI_PROVIDER", "").strip():
        if provider not in ("anthropic", "openai"):
            raise SettingsError(
                f"PERI_PROVIDER: expected 'anthropic' or 'openai', got {show(provider)}"
            )
        update["provider"] = provider
    if window := env.get("PERI_CONTEXT_WINDOW", "").strip():
        try:
            tokens = int(window)
        except ValueError:
            tokens = 0
        if tokens <= 0:
            raise SettingsError(
                f"PERI_CONTEXT_WINDOW: expected a positive number of tokens, got {show(window)}"
            )
        update["context_window"] = tokens
    if _env_flag(env, "DISABLE_COMPACT"):
        update["disable_compact"] = True
    if _env_flag(env, "DISABLE_AUTO_COMPACT"):
        update["disable_auto_compact"] = True
    return update


def compact_threshold_from_env(env: Mapping[str, str]) -> float | None:
    """`COMPACT_THRESHOLD` as a fraction in 0.0..1.0, None when unset; anything else is an error."""
    raw = env.get("COMPACT_THRESHOLD", "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= 1.0:  # also rejects nan
        raise SettingsError(
            f"COMPACT_THRESHOLD: expected a number from 0.0 to 1.0, got {show(raw)}"
        )
    return value
