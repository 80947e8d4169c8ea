"""The prompt with its completion popup, queued-message line and history."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from peri_cli.base.textsafe import visible
from peri_cli.tui.format import one_line, plain
from peri_cli.tui.history import PromptHistory
from peri_cli.tui.pastes import LONG_PASTE_LINES, expand, line_count, normalized, tag
from peri_cli.tui.widgets.completion_menu import CompletionMenu
from peri_cli.tui.widgets.prompt_input import PLACEHOLDER, PromptInput
from peri_cli.tui.widgets.status_line import StatusLineView

if TYPE_CHECKING:  # the completion modules load on the first keystroke, not at start-up
    from peri_cli.base.messages import ImagePart
    from peri_cli.tui.completion import Candidate, WorkspaceFiles


def index_of(text: str, location: tuple[int, int]) -> int:
    """Offset in `text` of a (row, column) location."""
    row, column = location
    lines = text.split("\n")
    return sum(len(line) + 1 for line in lines[:row]) + column


def location_of(text: str, index: int) -> tuple[int, int]:
    before = text[:index]
    return before.count("\n"), len(before) - (before.rfind("\n") + 1)


class PromptArea(Vertical):
    DEFAULT_CSS = """
    PromptArea {
        height: auto;
        padding: 0 1;
    }
    PromptArea #queued { color: $text-muted; padding: 0 1; }
    """

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(
        self,
        history: PromptHistory,
        files: WorkspaceFiles | None,
        workspace: str = "",
        *,
        placeholder: str = PLACEHOLDER,
    ) -> None:
        super().__init__()
        self.history = history
        self.files = files  # None until the workspace is known: no `@path` completion yet
        self.workspace = workspace
        self.menu = CompletionMenu(id="completion")
        self.input = PromptInput(id="prompt", placeholder=placeholder)
        self.queued = Static("", id="queued")
        self.queued.display = False
        self.status_line = StatusLineView(id="status-line")  # Claude Code's, under the prompt
        self._quiet = False  # the next change came from history, not typing: no popup
        # Pasted images by number: the prompt shows `[image #N]`, sending attaches the image.
        self.images: dict[int, ImagePart] = {}
        # Long pasted texts by number: the prompt shows `[Pasted text #N +L lines]`, sending puts
        # the text back in its place (kept all session, like the images, so a draft that history
        # recall set aside and brought back still has its pastes).
        self.pastes: dict[int, str] = {}
        self.input.paste_filter = self._paste

    def compose(self) -> ComposeResult:
        yield self.menu
        yield self.queued
        yield self.input
        yield self.status_line

    def on_mount(self) -> None:
        self._walk()

    def attach(self, history: PromptHistory, files: WorkspaceFiles, workspace: str) -> None:
        """Where the prompt's history and `@path`s come from, once the workspace is known."""
        self.history, self.files, self.workspace = history, files, workspace
        if self.is_mounted:
            self._walk()

    def _walk(self) -> None:
        # Walk the workspace in the background so the first `@` does not stall the prompt.
        files = self.files
        if files is not None:
            self.run_worker(asyncio.to_thread(lambda: files.files), exclusive=True, group="walk")

    @property
    def text(self) -> str:
        return self.input.text

    def clear(self) -> None:
        self._set_text("")

    def set_text(self, text: str) -> None:
        """Replace what is typed (no completion popup for it)."""
        self._set_text(text)

    def _set_text(self, text: str) -> None:
        self._quiet = True
        self.input.set_prompt(text)
        self.close_menu()

    def close_menu(self) -> bool:
        """Close the popup; True if it was open."""
        was_open = self.menu.is_open
        self.menu.close()
        self.input.menu_open = False
        return was_open

    def show_queued(self, texts: list[str]) -> None:
        self.queued.display = bool(texts)
        lines = [plain(f"⏳ queued: {one_line(t, 70)}") for t in texts]
        self.queued.update(Content("\n").join(lines))

    def _paste(self, text: str) -> str | None:
        """What a paste puts in the prompt: `[image #N]` for an image, `[Pasted text #N +L
        lines]` for 20 lines or more, or None: the text as it is."""
        image = self._pasted_image(text)
        if image is not None:
            return image
        text = normalized(text)
        if line_count(text) < LONG_PASTE_LINES:
            return None
        number = max(self.pastes, default=0) + 1
        self.pastes[number] = text
        return tag(number, text)

    def _pasted_image(self, text: str) -> str | None:
        """A pasted image (a path to one, or its data) becomes `[image #N]`."""
        if not self.workspace:
            return None
        from peri_cli.agent.attachments import pasted_image

        image = pasted_image(text, Path(self.workspace))
        if image is None:
            return None
        if isinstance(image, str):
            self.app.notify(visible(f"Not attached: {image}"), severity="warning", markup=False)
            return ""
        number = max(self.images, default=0) + 1
        self.images[number] = image
        return f"[image #{number}]"

    # completion

    def _candidates(self) -> list[Candidate]:
        from peri_cli.tui.completion import slash_candidates

        text = self.input.text
        if "\n" not in text and text.startswith("/"):  # (listing the extra commands costs)
            slash = slash_candidates(text, self.files.commands() if self.files else ())
            if slash:
                return slash
        if self.files is None:
            return []
        cursor = index_of(text, self.input.cursor_location)
        return self.files.candidates(text, cursor)

    def on_text_area_changed(self, event: PromptInput.Changed) -> None:
        event.stop()
        if self._quiet:
            self._quiet = False
            return
        self.history.reset()
        self.menu.show(self._candidates())
        self.input.menu_open = self.menu.is_open

    def _apply(self, candidate: Candidate) -> None:
        text = self.input.text
        new = text[: candidate.start] + candidate.replacement + text[candidate.end :]
        self._quiet = not candidate.replacement.endswith("/")  # a directory: list what is in it
        self.input.load_text(new)
        where = candidate.start + len(candidate.replacement)
        self.input.move_cursor(location_of(new, where))
        self.close_menu()

    def on_prompt_input_menu_key(self, event: PromptInput.MenuKey) -> None:
        event.stop()
        if event.key in ("up", "down"):
            self.menu.move(-1 if event.key == "up" else 1)
            return
        if event.key == "escape":
            self.close_menu()
            return
        candidate = self.menu.current
        if candidate is None:
            self.close_menu()
            return
        from peri_cli.extensions.commands import COMMANDS

        typed = self.input.text.strip()
        self._apply(candidate)
        name = candidate.replacement.strip().lstrip("/")
        takes_argument = name in COMMANDS and bool(COMMANDS[name].usage)
        if (
            event.key == "enter"
            and candidate.start == 0
            and name in COMMANDS
            and (not takes_argument or typed == f"/{name}")  # typed whole: run it as it is
        ):
            self._submit(self.input.text)

    # history and sending

    def on_prompt_input_history(self, event: PromptInput.History) -> None:
        event.stop()
        text = self.history.previous(self.input.text) if event.step < 0 else self.history.next()
        if text is not None:
            self._set_text(text)

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        event.stop()
        self._submit(event.text)

    def _submit(self, text: str) -> None:
        if not text.strip():
            return
        text = expand(text, self.pastes)  # what is sent, and what Up brings back: the whole text
        self.history.add(text, workspace=self.workspace)
        self.clear()
        self.post_message(self.Submitted(text))
