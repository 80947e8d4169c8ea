"""What the TUI's first frame shows before anything is validated: the model and provider named
by the flags, the environment and the settings files. Stdlib only, so it runs before the first
frame without pydantic; the files' text is kept and handed to the full read
(`settings.read_layers(pre_read=...)`), so each settings file is read once per start.

A best guess, never a decision: the runtime built after the first frame validates the same text
and the status line then shows what it decided (a bad file still ends the start with its error).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from peri_cli.base.safe_read import SafeReadError, read_text

SETTINGS_FILE = "settings.json"
LOCAL_SETTINGS_FILE = "settings.local.json"
PROJECT_DIR = ".peri"
MAX_SETTINGS_BYTES = 1 << 20
PROVIDERS = ("anthropic", "openai")
# The model used when none is configured: a current mid-tier model of each provider.
DEFAULT_MODELS = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-5.5"}

# What reading one settings file gave: its text, or why it was not read (missing included).
PreRead = Mapping[Path, "str | SafeReadError"]


def peri_home_from_env(env: Mapping[str, str]) -> Path:
    """`$PERI_HOME`, or `~/.peri` when unset or empty."""
    value = env.get("PERI_HOME", "")
    return Path(value).expanduser() if value else Path.home() / ".peri"


def settings_paths(workspace: Path, peri_home: Path) -> list[tuple[str, Path]]:
    """The settings files, lowest precedence first: user, project, local."""
    return [
        ("user", peri_home / SETTINGS_FILE),
        ("project", workspace / PROJECT_DIR / SETTINGS_FILE),
        ("local", workspace / PROJECT_DIR / LOCAL_SETTINGS_FILE),
    ]


def read_settings_texts(workspace: Path, peri_home: Path) -> dict[Path, str | SafeReadError]:
    """Each settings file's text (a FIFO or a huge file is refused unread, never waited on)."""
    texts: dict[Path, str | SafeReadError] = {}
    for _scope, path in settings_paths(workspace, peri_home):
        try:
            texts[path] = read_text(path, max_bytes=MAX_SETTINGS_BYTES)
        except SafeReadError as e:
            texts[path] = e
    return texts


def choose_provider(flag: str | None, configured: str | None, env: Mapping[str, str]) -> str:
    """The flag, else the settings' provider, else OpenAI when only its variables are set."""
    if flag:
        return flag
    if configured:
        return configured
    if (
        not env.get("ANTHROPIC_API_KEY")
        and not env.get("ANTHROPIC_BASE_URL")
        and (env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL"))
    ):
        return "openai"
    return "anthropic"


@dataclass(frozen=True)
class FirstLook:
    """The first frame's facts, and the settings files' text for the runtime to validate."""

    model: str
    provider: str
    texts: PreRead = field(default_factory=dict)


def first_look(
    workspace: Path,
    env: Mapping[str, str],
    *,
    model_flag: str | None = None,
    provider_flag: str | None = None,
) -> FirstLook:
    """Read the settings files once and name the model: flag, then environment, then the files
    (the later file wins), then the provider's default."""
    texts = read_settings_texts(workspace, peri_home_from_env(env))
    model, provider = _configured(texts)
    if value := env.get("PERI_MODEL", "").strip():
        model = value
    if (value := env.get("PERI_PROVIDER", "").strip()) in PROVIDERS:
        provider = value
    chosen = choose_provider(provider_flag, provider, env)
    return FirstLook(model_flag or model or DEFAULT_MODELS.get(chosen, ""), chosen, texts)


def _configured(texts: PreRead) -> tuple[str | None, str | None]:
    model = provider = None
    for text in texts.values():
        if isinstance(text, SafeReadError):
            continue
        try:
            data = json.loads(text) if text.strip() else {}
        except (ValueError, RecursionError):
            continue  # the runtime's read says what is wrong with it
        if not isinstance(data, dict):
            continue
        if isinstance(value := data.get("model"), str) and value:
            model = value
        if (value := data.get("provider")) in PROVIDERS:
            provider = value
    return model, provider
