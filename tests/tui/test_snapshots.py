"""SVG snapshots of the main views (pytest-textual-snapshot). Update after a deliberate change
with `pytest tests/tui/test_snapshots.py --snapshot-update` and look at the new pictures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from peri_cli.tui.screens.context_view import ContextView
from peri_cli.tui.screens.session_picker import SessionPicker
from peri_cli.tui.widgets.permission_prompt import PermissionPrompt

from . import scenes
from .harness import send, until


async def _settled(pilot: Any) -> None:
    app = pilot.app
    await until(pilot, lambda: app.runtime.session is not None and not app.busy)
    await app.workers.wait_for_complete()
    await pilot.pause()


def test_main_screen(snap_compare: Any, tmp_path: Path) -> None:
    app = scenes.main_screen(tmp_path)
    try:
        assert snap_compare(app, terminal_size=scenes.SIZE, run_before=_settled)
    finally:
        app.runtime.close()


def test_tool_call_with_diff(snap_compare: Any, tmp_path: Path) -> None:
    app = scenes.diff_screen(tmp_path)
    try:
        assert snap_compare(app, terminal_size=scenes.SIZE, run_before=_settled)
    finally:
        app.runtime.close()


def test_permission_prompt(snap_compare: Any, tmp_path: Path) -> None:
    app = scenes.permission_screen(tmp_path)

    async def asking(pilot: Any) -> None:
        await until(pilot, lambda: isinstance(app.focused, PermissionPrompt), what="the prompt")
        await pilot.pause()

    try:
        assert snap_compare(app, terminal_size=scenes.SIZE, run_before=asking)
    finally:
        app.runtime.close()


def test_session_picker(snap_compare: Any, tmp_path: Path) -> None:
    app = scenes.picker_screen(tmp_path)

    async def picking(pilot: Any) -> None:
        await until(pilot, lambda: isinstance(app.screen, SessionPicker), what="the picker")
        await pilot.pause()

    try:
        assert snap_compare(app, terminal_size=scenes.SIZE, run_before=picking)
    finally:
        app.runtime.close()


def test_context_view(snap_compare: Any, tmp_path: Path) -> None:
    app = scenes.main_screen(tmp_path)

    async def context(pilot: Any) -> None:
        await _settled(pilot)
        await send(pilot, "/context", wait=False)
        await until(pilot, lambda: isinstance(app.screen, ContextView), what="the context view")
        await pilot.pause()

    try:
        assert snap_compare(app, terminal_size=scenes.SIZE, run_before=context)
    finally:
        app.runtime.close()


def test_long_bash_approval_at_60x20(snap_compare: Any, tmp_path: Path) -> None:
    app = scenes.long_bash_screen(tmp_path)

    async def asking(pilot: Any) -> None:
        await until(pilot, lambda: isinstance(app.focused, PermissionPrompt), what="the prompt")
        await until(pilot, lambda: app.query_one(PermissionPrompt).hint.display, what="hint")
        await pilot.pause()

    try:
        assert snap_compare(app, terminal_size=(60, 20), run_before=asking)
    finally:
        app.runtime.close()
