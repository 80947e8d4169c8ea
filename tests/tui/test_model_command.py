"""`/model NAME` against the provider's own model list (issue 10: numbers the user reads)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from peri_cli.providers.scripted import ScriptedProvider, ScriptedReply
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.model_picker import ModelPicker

from .harness import FIXED_NOW, MODEL, make_runtime, screen_text, send, until
from .test_turns import notices

LISTED = ["claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5", MODEL]


def app_with(tmp_path: Path, provider: ScriptedProvider) -> PeriApp:
    runtime = make_runtime(tmp_path)
    runtime._provider = provider
    return PeriApp(runtime, clock=lambda: FIXED_NOW)


async def test_issue10_model_refuses_a_name_the_provider_does_not_have(tmp_path: Path) -> None:
    provider = ScriptedProvider([ScriptedReply(text="hi")], models=LISTED)
    app = app_with(tmp_path, provider)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "/model claude-sonet-4-5")
        assert app.agent.model == MODEL == app.runtime.model == app.status.status.model
        said = notices(app)
        assert "no model 'claude-sonet-4-5'" in said and f"still using {MODEL}" in said
        assert "claude-sonnet-4-5" in said  # the closest names are offered
        await send(pilot, "/model claude-opus-4-5")
        assert app.agent.model == "claude-opus-4-5" == app.status.status.model
        await send(pilot, "hello")
        assert provider.requests[-1].model == "claude-opus-4-5"
        assert provider.model_list_asks == 1  # asked once, not per command
    app.runtime.close()


async def test_issue10_model_without_a_list_switches_and_warns(tmp_path: Path) -> None:
    app = app_with(tmp_path, ScriptedProvider())
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "/model my-local-model")
        assert app.agent.model == "my-local-model" == app.status.status.model
        assert "window is a guess" in notices(app)
    app.runtime.close()


async def test_issue10_model_glob_entries_and_hostile_names(tmp_path: Path) -> None:
    hostile = "\x1b]52;c;cm0gLXJmIH4=\x07evil-model"
    app = app_with(tmp_path, ScriptedProvider(models=["openai/*", hostile]))
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "/model nothing-like-it")
        said = notices(app)
        assert app.agent.model == MODEL and "evil-model" in said
        assert "\x1b" not in said and "\x07" not in said
        await send(pilot, "/model openai/gpt-4.1")  # LiteLLM's wildcard route takes any name
        assert app.agent.model == "openai/gpt-4.1"
        await send(pilot, "/model")
        await until(pilot, lambda: isinstance(app.screen, ModelPicker), what="the picker")
        shown = screen_text(app)
        assert "openai/*" in shown and "evil-model" in shown and "\x1b" not in shown
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ModelPicker))
        assert app.agent.model == "openai/gpt-4.1"  # Esc keeps it
    app.runtime.close()


async def test_model_alone_offers_a_picker_with_the_current_models_first(tmp_path: Path) -> None:
    """Issue 42: `/model` listed a dozen names to copy; now a picker, the provider's current
    models (the newest of each family) first, the one in use marked; Enter switches."""
    from peri_cli.base.model_alias import ALIASES

    old = ["claude-3-haiku-20240307", "claude-sonnet-4-5", ALIASES["haiku"], ALIASES["sonnet"]]
    provider = ScriptedProvider([ScriptedReply(text="hi")], models=[*old, MODEL])
    app = app_with(tmp_path, provider)
    async with app.run_test(size=(60, 20)) as pilot:
        await send(pilot, "/model")
        await until(pilot, lambda: isinstance(app.screen, ModelPicker), what="the picker")
        picker = app.screen
        assert isinstance(picker, ModelPicker)
        assert picker.models[: picker.current] == [ALIASES["sonnet"], ALIASES["haiku"]]
        assert picker.models[picker.current :][:2] == [
            "claude-3-haiku-20240307",
            "claude-sonnet-4-5",
        ]
        assert "(in use)" in screen_text(app) and "current" in screen_text(app)
        picker.query_one(OptionList).highlighted = 0
        await pilot.press("enter")
        await until(pilot, lambda: app.agent.model == ALIASES["sonnet"], what="the switch")
        assert app.status.status.model == ALIASES["sonnet"]
    app.runtime.close()
