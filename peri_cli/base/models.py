"""Known models: context window, output limit and list price, looked up by name.

Figures are the providers' published ones (USD per million tokens, standard tier, prompts under
any long-context surcharge threshold); they change, so the table is data and easy to amend.
Anthropic's cache write is the 5-minute write (1.25x input); OpenAI charges nothing extra for
cache writes, so its write price is the input price.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from peri_cli.base.first_look import DEFAULT_MODELS as _DEFAULT_MODELS
from peri_cli.base.messages import Usage

DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_OUTPUT = 8_192


@dataclass(frozen=True, slots=True)
class Pricing:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float


@dataclass(frozen=True, slots=True)
class ModelInfo:
    name: str  # the table key that matched, or the asked-for name when nothing did
    context_window: int
    max_output: int
    pricing: Pricing | None
    known: bool = True


def _anthropic(inp: float, out: float) -> Pricing:
    return Pricing(inp, out, cache_read=round(inp * 0.1, 6), cache_write=round(inp * 1.25, 6))


def _openai(inp: float, out: float, cached: float | None = None) -> Pricing:
    return Pricing(inp, out, cache_read=inp if cached is None else cached, cache_write=inp)


_1M = 1_000_000
_OPENAI_1M = 1_050_000
_GPT41_WINDOW = 1_047_576

# name -> (context window, max output, pricing)
_TABLE: dict[str, tuple[int, int, Pricing | None]] = {
    # --- Anthropic
    "claude": (200_000, 8_192, None),  # family fallback: window known, price not
    "claude-3-haiku": (200_000, 4_096, Pricing(0.25, 1.25, 0.03, 0.30)),
    "claude-3-opus": (200_000, 4_096, _anthropic(15, 75)),
    "claude-3-5-haiku": (200_000, 8_192, _anthropic(0.80, 4)),
    "claude-3-5-sonnet": (200_000, 8_192, _anthropic(3, 15)),
    "claude-3-7-sonnet": (200_000, 64_000, _anthropic(3, 15)),
    "claude-haiku-4-5": (200_000, 64_000, _anthropic(1, 5)),
    "claude-sonnet-4": (200_000, 64_000, _anthropic(3, 15)),
    "claude-sonnet-4-5": (200_000, 64_000, _anthropic(3, 15)),
    "claude-sonnet-4-6": (_1M, 128_000, _anthropic(3, 15)),
    "claude-sonnet-5": (_1M, 128_000, _anthropic(2, 10)),
    "claude-sonnet-5-5": (_1M, 128_000, _anthropic(2, 10)),
    "claude-opus-4": (200_000, 32_000, _anthropic(15, 75)),
    "claude-opus-4-1": (200_000, 32_000, _anthropic(15, 75)),
    "claude-opus-4-5": (200_000, 64_000, _anthropic(5, 25)),
    "claude-opus-4-6": (_1M, 128_000, _anthropic(5, 25)),
    "claude-opus-4-7": (_1M, 128_000, _anthropic(5, 25)),
    "claude-opus-4-8": (_1M, 128_000, _anthropic(5, 25)),
    "claude-opus-5": (_1M, 128_000, _anthropic(5, 25)),
    "claude-opus-5-5": (_1M, 128_000, _anthropic(4, 20)),
    "claude-fable-5-1": (_1M, 128_000, _anthropic(10, 50)),
    # --- OpenAI
    "gpt": (DEFAULT_CONTEXT_WINDOW, 16_384, None),  # family fallback
    "gpt-3.5-turbo": (16_385, 4_096, _openai(0.50, 1.50)),
    "gpt-4": (8_192, 8_192, _openai(30, 60)),
    "gpt-4-turbo": (128_000, 4_096, _openai(10, 30)),
    "gpt-4o": (128_000, 16_384, _openai(2.50, 10, 1.25)),
    "gpt-4o-mini": (128_000, 16_384, _openai(0.15, 0.60, 0.075)),
    "gpt-4.1": (_GPT41_WINDOW, 32_768, _openai(2, 8, 0.50)),
    "gpt-4.1-mini": (_GPT41_WINDOW, 32_768, _openai(0.40, 1.60, 0.10)),
    "gpt-4.1-nano": (_GPT41_WINDOW, 32_768, _openai(0.10, 0.40, 0.025)),
    "gpt-5": (400_000, 128_000, _openai(1.25, 10, 0.125)),
    "gpt-5-mini": (400_000, 128_000, _openai(0.25, 2, 0.025)),
    "gpt-5-nano": (400_000, 128_000, _openai(0.05, 0.40, 0.005)),
    "gpt-5-pro": (400_000, 272_000, _openai(15, 120)),
    "gpt-5.1": (400_000, 128_000, _openai(1.25, 10, 0.125)),
    "gpt-5.2": (400_000, 128_000, _openai(1.75, 14, 0.175)),
    "gpt-5.4": (_OPENAI_1M, 128_000, _openai(2.50, 15, 0.25)),
    "gpt-5.4-mini": (400_000, 128_000, _openai(0.75, 4.50, 0.075)),
    "gpt-5.5": (_OPENAI_1M, 128_000, _openai(5, 30, 0.50)),
    "gpt-5.6": (_OPENAI_1M, 128_000, _openai(5, 30, 0.50)),  # alias of gpt-5.6-sol
    "gpt-5.6-sol": (_OPENAI_1M, 128_000, _openai(5, 30, 0.50)),
    "gpt-5.6-terra": (_OPENAI_1M, 128_000, _openai(2, 12, 0.20)),
    "gpt-5.6-luna": (_OPENAI_1M, 128_000, _openai(0.20, 1.20, 0.02)),
    "o1": (200_000, 100_000, _openai(15, 60, 7.50)),
    "o1-mini": (128_000, 65_536, _openai(1.10, 4.40, 0.55)),
    "o1-pro": (200_000, 100_000, _openai(150, 600)),
    "o3": (200_000, 100_000, _openai(2, 8, 0.50)),
    "o3-mini": (200_000, 100_000, _openai(1.10, 4.40, 0.55)),
    "o3-pro": (200_000, 100_000, _openai(20, 80)),
    "o4-mini": (200_000, 100_000, _openai(1.10, 4.40, 0.275)),
}

# Dated snapshots and version tags name the same model: -20250514, @20251001, -2024-08-06,
# -0613, -v1:0, -latest.
_SUFFIX_RE = re.compile(r"(?:[-@](?:\d{8}|\d{4}-\d{2}-\d{2}|\d{4})|-v\d+(?::\d+)?|-latest)+$")


def normalize(model: str) -> str:
    """Lower-case, without a router prefix (``openrouter/anthropic/``), a Bedrock prefix
    (``us.anthropic.``) or a date/version suffix."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    if "anthropic." in name:
        name = name.split("anthropic.", 1)[1]
    return _SUFFIX_RE.sub("", name) or name


_FAMILIES = frozenset({"claude", "gpt"})


def _matches(name: str, key: str) -> bool:
    # A prefix counts at a separator that is not followed by a digit, so "claude-opus-4" covers
    # "claude-opus-4-thinking" but does not price a future "claude-opus-4-9", and "gpt-4" does
    # not cover "gpt-4o" or "gpt-4.1". A family key covers every model of the family.
    if not name.startswith(key):
        return False
    rest = name[len(key) :]
    if key in _FAMILIES:
        return rest.startswith("-")
    return rest == "" or (rest[0] in "-_:@" and not rest[1:2].isdigit())


def model_info(model: str) -> ModelInfo:
    """By exact name (after normalize), then the longest matching prefix, then a default."""
    name = normalize(model)
    entry = _TABLE.get(name)
    key = name
    if entry is None:
        keys = [k for k in _TABLE if _matches(name, k)]
        if keys:
            key = max(keys, key=len)
            entry = _TABLE[key]
    if entry is None:
        return ModelInfo(model, DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_OUTPUT, None, known=False)
    window, max_output, pricing = entry
    return ModelInfo(key, window, max_output, pricing)


def context_window(model: str, override: int | None = None) -> int:
    """The model's window, unless an override (settings' PERI_CONTEXT_WINDOW) replaces it."""
    if override is not None and override > 0:
        return override
    return model_info(model).context_window


def max_output_tokens(model: str) -> int:
    return model_info(model).max_output


def cost_usd(model: str, usage: Usage) -> float | None:
    """List-price cost of one usage record; None when the model's price is unknown."""
    pricing = model_info(model).pricing
    if pricing is None:
        return None
    return (
        usage.input_tokens * pricing.input
        + usage.output_tokens * pricing.output
        + usage.cache_read_input_tokens * pricing.cache_read
        + usage.cache_creation_input_tokens * pricing.cache_write
    ) / 1_000_000


def default_model(provider: str) -> str:
    """The model used when none is configured: a current mid-tier model of that provider."""
    try:
        return _DEFAULT_MODELS[provider]
    except KeyError as e:
        raise ValueError(f"no default model for provider {provider!r}") from e


def known_models() -> list[str]:
    """Table keys, family fallbacks ("claude", "gpt") excluded."""
    return [k for k, (_, _, p) in _TABLE.items() if p is not None]
