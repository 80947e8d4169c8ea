"""What the app's keys do (`keymap` lists them): Esc and Ctrl+C in their order of precedence,
Esc Esc for /rewind, Shift+Tab's mode cycle, Ctrl+R's history search, paging, and which keys act
where (a popup's own keys win; the SubAgent strip's only while it shows)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual import events

if TYPE_CHECKING:
    from peri_cli.agent.host import SessionHost
    from peri_cli.tui.ports import AppPort

QUIT_WINDOW = 2.0  # seconds within which a second Ctrl+C quits
ESC_ESC_WINDOW = 0.8  # seconds within which a second Esc on an empty idle prompt opens /rewind
# Shift+Tab's cycle; bypass joins it only when Peri was started in it.
MODE_CYCLE = ("default", "accept-edits", "plan")
# on a popup screen its own keys act (the picker pages its list)
MODAL_KEYS = ("page", "bottom", "toggle_folds", "cycle_mode", "search_history")


class Keys:
    def __init__(self, app: AppPort) -> None:
        self.app = app
        self._quit_armed = 0.0
        self._escaped = 0.0  # when Esc last did nothing (a second one soon opens /rewind)
        self._bypass_cycle: bool | None = None  # started in bypass: Shift+Tab may return to it

    def attached(self, runtime: SessionHost) -> None:
        if self._bypass_cycle is None:
            self._bypass_cycle = runtime.mode == "bypass"

    def on_key(self, event: events.Key) -> None:
        """Printable keys always reach the prompt, whatever has focus (a fold, a record)."""
        app = self.app
        prompt = app.prompt_area.input
        if (
            event.is_printable
            and event.character
            and not app.screen.is_modal
            and app.focused is not prompt
            and not _is_approval(app.focused)
        ):
            event.stop()
            event.prevent_default()
            prompt.focus()
            prompt.insert(event.character)

    def allowed(self, action: str) -> bool:
        app = self.app
        if action.startswith("agents_"):
            return self._agents_key_allowed(action)
        if action == "focus_approval":
            return app.approvals.pending is not None and not app.screen.is_modal
        return not (action in MODAL_KEYS and app.screen.is_modal)

    def _agents_key_allowed(self, action: str) -> bool:
        """Ctrl+↓ focuses the strip while it shows; ↓ does too, from an empty prompt only (else
        it moves in the prompt, its menu or its history)."""
        app = self.app
        if not app.agent_strip.display or app.screen.is_modal:
            return False
        if action == "agents_strip_from_prompt":
            return (
                app.focused is app.prompt_area.input
                and not app.prompt_area.text
                and not app.prompt_area.menu.is_open
            )
        return True

    async def escape(self) -> None:
        """Esc, first match wins: close a popup or menu; deny a pending approval; return focus
        to the prompt; interrupt the running turn. It never clears typed text."""
        app = self.app
        pending = app.approvals.pending
        if app.screen.is_modal:
            app.screen.dismiss(None)
        elif app.prompt_area.close_menu():
            pass
        elif pending is not None:
            pending.action_answer("deny")
        elif app.focused is not app.prompt_area.input:
            app.prompt_area.input.focus()
        elif app.turn_running:
            app.cancel_turn()
        else:
            await self._escape_twice()

    async def _escape_twice(self) -> None:
        """Esc Esc on an empty prompt while idle opens /rewind."""
        app = self.app
        if app.busy or app.prompt_area.text or app.runtime.session is None:
            self._escaped = 0.0
            return
        now = time.monotonic()
        if now - self._escaped > ESC_ESC_WINDOW:
            self._escaped = now
            return
        self._escaped = 0.0
        from peri_cli.tui.commands.rewind import rewind

        await rewind(app, "")

    async def interrupt(self) -> None:
        app = self.app
        if app.screen.is_modal:
            app.screen.dismiss(None)
        elif app.prompt_area.close_menu():
            pass
        elif app.turn_running:
            app.cancel_turn()
        elif app.prompt_area.text:
            app.prompt_area.clear()
        elif time.monotonic() - self._quit_armed < QUIT_WINDOW:
            app.exit(0)
        else:
            self._quit_armed = time.monotonic()
            app.notify("Press Ctrl+C again to quit", timeout=QUIT_WINDOW)

    def cycle_mode(self) -> None:
        """Shift+Tab: default -> accept-edits -> plan -> (bypass, if started in it) -> default."""
        app = self.app
        if app.screen.is_modal or not app.ready or app.runtime.agent is None:
            return
        if self._bypass_cycle is None:
            self._bypass_cycle = app.runtime.mode == "bypass"
        cycle = [*MODE_CYCLE, *(["bypass"] if self._bypass_cycle else [])]
        current = app.agent.policy.mode
        following = cycle[(cycle.index(current) + 1) % len(cycle)] if current in cycle else cycle[0]
        app.runtime.mode = app.agent.policy.mode = following  # type: ignore[assignment]
        app.refresh_status()

    async def search_history(self) -> None:
        """Ctrl+R: search the prompt history; the chosen prompt replaces what is typed."""
        from peri_cli.tui.screens.history_search import HistorySearch

        app = self.app
        if app.screen.is_modal:
            return

        def chosen(text: str | None) -> None:
            if text is not None:
                app.prompt_area.set_text(text)
            app.prompt_area.input.focus()

        area = app.prompt_area
        await app.push_screen(HistorySearch(app.history, area.workspace, area.text), chosen)

    def page(self, pages: int) -> None:
        app = self.app
        pending = app.approvals.pending
        if pending is not None:
            pending.scroll_page(pages)
        elif pages < 0:
            app.conversation.scroll_page_up(animate=False)
        else:
            app.conversation.scroll_page_down(animate=False)

    def bottom(self) -> None:
        pending = self.app.approvals.pending
        if pending is not None:
            pending.scroll_body(end=True)
        self.app.conversation.to_bottom()


def _is_approval(widget: object) -> bool:
    """An approval has the keys (its letters answer it). Imported here, not for the first frame:
    the approval widgets are loaded with the first approval, or with this first stray key."""
    from peri_cli.tui.widgets.permission_prompt import PermissionPrompt

    return isinstance(widget, PermissionPrompt)
