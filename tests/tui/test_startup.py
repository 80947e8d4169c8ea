"""The shell draws before the runtime exists: `PeriApp` given a function that builds the runtime
takes keys at once, and sends what was typed once the session is attached."""

from __future__ import annotations

import asyncio
import gc
import threading
from pathlib import Path
from typing import Any

import pytest

from peri_cli.providers.scripted import ScriptedReply
from peri_cli.sdk.runtime import Runtime, StartupError
from peri_cli.tui.app import PeriApp
from peri_cli.tui.sessions import GC_THRESHOLDS
from peri_cli.tui.startup import QuietStart, RuntimeSlot
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


async def test_the_build_starts_in_a_gap_in_the_typing() -> None:
    """Keys pressed faster than the gap hold the build back; the first gap lets it start."""
    loop = asyncio.get_running_loop()
    started: list[float] = []
    gate = QuietStart(lambda: started.append(loop.time()), gap=0.3, latest=30.0)
    gate.arm()
    for _ in range(5):  # keys every 0.05 s: no gap of 0.3 s
        await asyncio.sleep(0.05)
        gate.typed()
    last_key = loop.time()
    assert started == []
    await until_true(lambda: bool(started))
    assert started[0] >= last_key + 0.3 - 0.01  # (the loop's clock: a little coarse)
    gate.typed()  # a key after it started changes nothing
    await asyncio.sleep(0.4)
    assert len(started) == 1


async def test_typing_on_and_on_delays_the_build_no_later_than_its_latest() -> None:
    loop = asyncio.get_running_loop()
    started: list[float] = []
    gate = QuietStart(lambda: started.append(loop.time()), gap=5.0, latest=0.4)
    armed = loop.time()
    gate.arm()
    while not started and loop.time() < armed + 10:
        gate.typed()  # never a gap of 5 s
        await asyncio.sleep(0.02)
    assert len(started) == 1 and started[0] >= armed + 0.4 - 0.01


async def until_true(condition: Any, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition() and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.01)


async def test_a_first_prompt_starts_the_build_without_waiting_for_a_gap(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [ScriptedReply(text="at once")])
    app = PeriApp(lambda: runtime, "go", clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        assert app._quiet_start is None  # `peri "go"`: the user already said what to do
        await until(pilot, lambda: app.query(AssistantMessage) and not app.busy, what="the turn")
        assert app.query_one(AssistantMessage).text == "at once"
    runtime.close()
    waits = PeriApp(lambda: runtime, clock=lambda: FIXED_NOW)
    async with waits.run_test(size=(100, 30)) as pilot:
        assert isinstance(waits._quiet_start, QuietStart)
        await until(pilot, lambda: waits.ready, what="the runtime")


async def test_collection_paused_for_the_start_resumes_once_the_runtime_is_built(
    tmp_path: Path,
) -> None:
    """`cli` pauses the garbage collector for the start; the app that owns the process turns
    it back on (start-up frozen out of it, fewer young collections) as soon as the runtime
    exists, before a trust question that may wait for minutes."""
    runtime = make_runtime(tmp_path)
    before = gc.get_threshold()
    gc.disable()
    try:
        app = PeriApp(lambda: runtime, clock=lambda: FIXED_NOW, freeze_gc=True)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: app.ready, what="the runtime")
            assert gc.isenabled() and gc.get_threshold() == GC_THRESHOLDS
            assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
        gc.enable()
        runtime.close()


async def test_quitting_before_the_gap_builds_nothing(tmp_path: Path) -> None:
    built: list[bool] = []

    def build() -> Runtime:
        built.append(True)
        return make_runtime(tmp_path)

    app = PeriApp(build, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()  # the first frame is drawn: the build waits for a gap
        assert built == [] and app._quiet_start is not None
        app.exit()  # before the gap came
    await asyncio.sleep(0.8)  # past the latest start (0.5 s)
    assert built == []
