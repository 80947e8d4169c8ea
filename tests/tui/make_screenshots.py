"""Render the README screenshots from the same fixed scenes as the snapshot tests.

.venv/bin/python tests/tui/make_screenshots.py   # writes docs/screenshots/*.svg (+ .png
                                                 # when rsvg-convert is installed)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from textual._doc import take_svg_screenshot  # noqa: E402

from tui import scenes  # noqa: E402
from tui.harness import send, until  # noqa: E402
from tui.test_snapshots import _settled  # noqa: E402

OUT = HERE.parents[1] / "docs" / "screenshots"


async def _context(pilot: Any) -> None:
    await _settled(pilot)
    await send(pilot, "/context", wait=False)
    await until(pilot, lambda: type(pilot.app.screen).__name__ == "ContextView")


async def _picker(pilot: Any) -> None:
    await until(pilot, lambda: type(pilot.app.screen).__name__ == "SessionPicker")


async def _asking(pilot: Any) -> None:
    await until(pilot, lambda: type(pilot.app.focused).__name__ == "PermissionPrompt")


SHOTS = {
    "main": (scenes.main_screen, _settled),
    "diff": (scenes.diff_screen, _settled),
    "permission": (scenes.permission_screen, _asking),
    "picker": (scenes.picker_screen, _picker),
    "context": (scenes.main_screen, _context),
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (scene, before) in SHOTS.items():
        with tempfile.TemporaryDirectory() as tmp:
            app = scene(Path(tmp))
            try:
                svg = take_svg_screenshot(app, terminal_size=scenes.SIZE, run_before=before)
            finally:
                app.runtime.close()
        svg = svg.replace("<svg ", '<svg xml:space="preserve" ', 1)  # keep runs of spaces
        path = OUT / f"{name}.svg"
        path.write_text(svg)
        if shutil.which("rsvg-convert"):
            subprocess.run(
                ["rsvg-convert", "-b", "#1e1e1e", str(path), "-o", str(path.with_suffix(".png"))],
                check=True,
            )
        print(path)


if __name__ == "__main__":
    main()
