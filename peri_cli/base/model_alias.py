"""Claude Code's model aliases (`sonnet`, `opus`, `haiku`) as the provider's model ids.

Command and agent front matter, the SDK's agent definitions and Claude Code's settings files name
models by family; a provider is asked for a full id. Stdlib only: the settings files' `model` is
read before the TUI's first frame, which loads no pydantic (`first_look`).
"""

from __future__ import annotations

# The Anthropic provider's current model of each family (`tests/base/test_model_alias.py` checks
# each is the newest of its family in `models.py`'s table, so the two move together).
ALIASES = {
    "sonnet": "claude-sonnet-5-5",
    "opus": "claude-opus-5-5",
    "haiku": "claude-haiku-4-5",
}
# Names that mean "the model this session runs on".
_SESSION = frozenset({"", "inherit", "default"})
# Claude Code's other aliases: no counterpart here, so the session's model with a note.
_UNMAPPED = frozenset({"opusplan"})
_PROVIDERS_WITH_FAMILIES = frozenset({"anthropic"})


def resolve_model_alias(value: str, provider: str, session_model: str) -> tuple[str, str | None]:
    """(the model id to ask `provider` for, a note for the user or None). An alias becomes the
    provider's current model of that family; where the provider has no such family (OpenAI),
    or Peri knows no counterpart, the session's model, with a note saying so. A full model id
    is kept as written."""
    name = value.strip()
    key = name.lower()
    if key in _SESSION:
        return session_model, None
    family = key.removesuffix("[1m]")  # the 1M-context variant: Peri's table knows the window
    if family in ALIASES:
        if provider in _PROVIDERS_WITH_FAMILIES:
            return ALIASES[family], None
        return session_model, (
            f"model alias '{name}' names a Claude model family, which the {provider} provider "
            f"does not have; using the session's model, {session_model}"
        )
    if key in _UNMAPPED:
        return session_model, (
            f"model alias '{name}' has no counterpart in Peri; using the session's model, "
            f"{session_model}"
        )
    return name, None
