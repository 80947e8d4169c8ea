"""Running tools' progress, the latest report per call, for the loop to yield."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from peri_cli.base.events import ToolProgress
from peri_cli.base.messages import ToolUsePart
from peri_cli.base.textsafe import scrub_surrogates


class LiveOutput:
    """Running tools' progress reports, the latest per call, and a wake-up for the loop that
    yields them; reports between two looks collapse into one (the UI throttles no further)."""

    def __init__(self) -> None:
        self.latest: dict[str, ToolProgress] = {}
        self.changed = asyncio.Event()

    def reporter(self, use: ToolUsePart) -> Callable[[str], None]:
        def report(text: str) -> None:
            self.latest[use.id] = ToolProgress(use.id, use.name, scrub_surrogates(text))
            self.changed.set()

        return report

    def take(self) -> list[ToolProgress]:
        reports = list(self.latest.values())
        self.latest.clear()
        self.changed.clear()
        return reports
