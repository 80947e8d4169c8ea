"""Claude Code's model aliases (`sonnet`, `opus`, `haiku`) as full model ids (issue 39)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from peri_cli.base.model_alias import ALIASES, resolve_model_alias
from peri_cli.base.models import known_models, model_info

SESSION = "claude-sonnet-4-5"


@pytest.mark.parametrize(
    ("value", "family"),
    [("sonnet", "sonnet"), ("opus", "opus"), ("haiku", "haiku"), (" Opus ", "opus")],
)
def test_an_alias_is_the_anthropic_providers_current_model_of_its_family(
    value: str, family: str
) -> None:
    model, note = resolve_model_alias(value, "anthropic", SESSION)
    assert note is None
    assert model == ALIASES[family]
    assert model.startswith(f"claude-{family}-")
    assert model_info(model).known  # a model Peri knows the window and price of


def test_each_alias_names_the_newest_model_of_its_family_in_the_table() -> None:
    """The alias table and the models table cannot drift apart: a newer model added to
    `base/models.py` must move its family's alias with it."""

    def version(name: str) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", name))

    for family, model in ALIASES.items():
        members = [k for k in known_models() if re.fullmatch(rf"claude-{family}-[\d-]+", k)]
        assert model == max(members, key=version), family


def test_the_1m_variant_is_the_same_family() -> None:
    assert resolve_model_alias("sonnet[1m]", "anthropic", SESSION) == (ALIASES["sonnet"], None)


@pytest.mark.parametrize("value", ["inherit", "", "  ", "default"])
def test_inherit_default_and_empty_keep_the_session_model(value: str) -> None:
    assert resolve_model_alias(value, "anthropic", SESSION) == (SESSION, None)
    assert resolve_model_alias(value, "openai", "gpt-5.5") == ("gpt-5.5", None)


def test_a_full_model_id_is_kept_as_written() -> None:
    assert resolve_model_alias("claude-opus-4-1", "anthropic", SESSION) == ("claude-opus-4-1", None)
    assert resolve_model_alias("gpt-5-mini", "openai", "gpt-5.5") == ("gpt-5-mini", None)


def test_openai_has_no_family_so_an_alias_falls_back_to_the_session_model_with_a_note() -> None:
    model, note = resolve_model_alias("sonnet", "openai", "gpt-5.5")
    assert model == "gpt-5.5"
    assert note is not None
    assert "'sonnet'" in note and "gpt-5.5" in note and "openai" in note


def test_an_alias_peri_does_not_map_falls_back_with_a_note() -> None:
    model, note = resolve_model_alias("opusplan", "anthropic", SESSION)
    assert model == SESSION
    assert note is not None and "'opusplan'" in note


def test_the_module_imports_only_the_standard_library() -> None:
    """The settings files' `model` is read before the TUI's first frame (no pydantic then)."""
    code = (
        "import sys; import peri_cli.base.model_alias; "
        "print(sorted(m for m in ('pydantic', 'yaml') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
