"""/output-style in the TUI (CONTRACT §12): the list of styles (built-ins, the project's files, a
broken one named), a pick saved as `outputStyle` in `.peri/settings.local.json`, the session
shown keeping its frozen prompt (and `/clear` saying the style waits for a new session), and the
next new session taking it. Real runtimes (`build_runtime`), the files on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.style_picker import StylePicker
from peri_cli.tui.widgets.notice import NoticeLine

from .harness import FIXED_NOW, screen_text, send, until
from .test_extension_commands import builder, ready

SIZE = (120, 40)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    monkeypatch.chdir(path)  # `peri` runs in the workspace
    styles = path / ".claude" / "output-styles"
    styles.mkdir(parents=True)
    (styles / "pirate.md").write_text(
        "---\nname: Pirate\ndescription: Talks like a pirate\n---\nSay arr in every answer.\n"
    )
    (styles / "broken.md").write_bytes(b"---\nname: x\n---\n\xff\xfe\n")
    return path


def notices(app: PeriApp) -> list[str]:
    return [str(n.text) for n in app.query(NoticeLine)]


def local_settings(ws: Path) -> dict[str, object]:
    return json.loads((ws / ".peri" / "settings.local.json").read_text())


async def test_pick_a_style_for_new_sessions(ws: Path, tmp_path: Path) -> None:
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        frozen = app.agent.session.snapshot
        await send(pilot, "/output-style", wait=False)
        await until(pilot, lambda: isinstance(app.screen, StylePicker), what="the picker")
        await pilot.pause()
        screen = screen_text(app)
        for name in ("Default", "Explanatory", "Learning", "Pirate", "Talks like a pirate"):
            assert name in screen, name
        assert "(this session, new sessions)" in screen  # on Default
        assert any("broken.md" in n and "UTF-8" in n for n in notices(app)), notices(app)
        await pilot.press("down", "enter")
        await until(pilot, lambda: any("saved to" in n for n in notices(app)), what="saved")
        said = next(n for n in notices(app) if "saved to" in n)
        assert said.startswith("Output style Explanatory saved to ")
        assert "settings.local.json" in said and "next new session" in said
        assert local_settings(ws)["outputStyle"] == "Explanatory"
        # the session shown keeps its frozen prompt, and /clear says the style waits
        assert app.agent.session.snapshot == frozen and frozen.output_style is None
        await send(pilot, "/clear")
        assert any(
            "stays Default in this session" in n and "Explanatory applies from the next" in n
            for n in notices(app)
        ), notices(app)
        assert app.agent.session.snapshot.system == frozen.system


async def test_by_name_unknown_names_and_the_next_session(ws: Path, tmp_path: Path) -> None:
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/output-style nonesuch")
        error = notices(app)[-1]
        assert "No output style 'nonesuch'" in error and "Pirate" in error
        assert not (ws / ".peri" / "settings.local.json").exists()
        await send(pilot, "/output-style PIRATE")
        assert local_settings(ws)["outputStyle"] == "Pirate"
        await send(pilot, "/output-style default")
        assert local_settings(ws)["outputStyle"] == "default"
        assert "this session already uses it" in notices(app)[-1]
        await send(pilot, "/output-style pirate")
        # a new session takes the style into its frozen prompt
        session = app.runtime.start_new()
        assert session.snapshot.output_style == "Pirate"
        assert "# Output style: Pirate\n\nSay arr in every answer." in session.snapshot.system
        assert app.runtime.session_style == "Pirate"
