"""The environment of every child process Peri starts: Peri's own credentials removed.

Bash, the user's `!` commands, hooks and MCP stdio servers all start from `child_env`, so a command
the model runs (`echo $ANTHROPIC_API_KEY`, `env > f`) never sees the provider keys. Base URLs are
removed too: they can carry a password (`http://user:PWD@host/`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# Every variable with one of these prefixes belongs to a provider Peri talks to.
CREDENTIAL_PREFIXES = ("ANTHROPIC_", "OPENAI_")


def is_credential(name: str, extra: Iterable[str] = ()) -> bool:
    return name.startswith(CREDENTIAL_PREFIXES) or name in set(extra)


def child_env(env: Mapping[str, str], extra: Iterable[str] = ()) -> dict[str, str]:
    """`env` without provider variables and without the names in `extra` (a setting lists them)."""
    hidden = set(extra)
    return {
        k: v for k, v in env.items() if not k.startswith(CREDENTIAL_PREFIXES) and k not in hidden
    }
