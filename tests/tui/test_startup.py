"""The shell draws before the runtime exists: `PeriApp` given a function that builds the runtime
takes keys at once, and sends what was typed once the session is attached."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from peri_cli.providers.scripted import ScriptedReply
from peri_cli.sdk.runtime import Runtime, StartupError
from peri_cli.tui.app import PeriApp
from peri_cli.tui.startup import RuntimeSlot
from peri_cli.tui.widgets.assistant_message import AssistantMessage
from peri_cli.tui.widgets.prompt_input import PLACEHOLDER

from .harness import FIXED_NOW, make_runtime, until
from .test_turns import notices


async def test_prompt_takes_keys_while_the_runtime_builds(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [ScriptedReply(text="hello from the model")])
    release = threading.Event()

    def build() -> Runtime:
        release.wait(10)  # the core being imported and the session opened, slowly
        return runtime

    app = PeriApp(build, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert not app.ready and app.focused is app.prompt_area.input
        assert str(app.prompt_area.input.placeholder) == ""  # the invitation comes with the session
        await pilot.press(*"hi", "enter")  # typed and sent before the runtime exists
        assert app.queue == ["hi"] and app.prompt_area.text == ""
        release.set()
        await until(pilot, lambda: app.ready, what="the runtime")
        await until(pilot, lambda: app.query(AssistantMessage) and not app.busy, what="the turn")
        assert app.query_one(AssistantMessage).text == "hello from the model"
        assert str(app.prompt_area.input.placeholder) == PLACEHOLDER
        assert "Peri in" in notices(app)
    runtime.close()


async def test_a_startup_error_ends_the_app_with_its_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def build() -> Runtime:
        raise StartupError("no such session: abc", exit_code=2)

    app = PeriApp(build, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: not app.is_running, what="the app to exit")
    assert app.return_code == 2
    assert "peri: error: no such session: abc" in capsys.readouterr().err  # as cli.py says it


class _Closable:
    closed = 0

    def close(self) -> None:
        self.closed += 1


async def test_a_runtime_built_after_quitting_is_closed() -> None:
    built = _Closable()
    release = threading.Event()

    def build() -> Any:
        release.wait(10)
        return built

    slot = RuntimeSlot(build)
    task = asyncio.ensure_future(slot.build())
    await asyncio.sleep(0.05)
    slot.release()  # the app quit while the runtime was being built
    release.set()
    await task
    assert built.closed == 1 and slot.runtime is None
    done = _Closable()

    def build_at_once() -> Any:
        return done

    slot = RuntimeSlot(build_at_once)
    await slot.build()
    slot.release()
    slot.release()
    assert done.closed == 1
