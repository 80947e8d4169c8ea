"""The key footer: Textual's `Footer`, rebuilt only when the keys it shows change.

Textual rebuilds the footer (a widget per key, styled and mounted anew) whenever the screen's
bindings may have changed: a focus change, the app gaining focus, a reactive declared with
`bindings=True`. Right after the first frame that is three rebuilds of the same five keys in
60 ms, while the first key the user types waits for them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.events import Resize
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from textual.screen import Screen

Shown = tuple[tuple[str, str, str, str, bool, str], ...]


class KeyFooter(Footer):
    _shown: Shown | None = None
    _width = 0  # the width the keys were fitted to

    def compose(self) -> ComposeResult:
        """Only the keys that fit whole (in order); a key cut in half helps nobody."""
        room = self.size.width or self.app.size.width
        self._width = room
        kept = 0
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                # " key description " (Textual pads each key by one cell a side)
                room -= cell_len(widget.key_display) + cell_len(widget.description) + 3
                if room < 0:
                    continue
                kept += 1
            yield widget
        self.styles.grid_size_columns = max(kept, 1)

    def on_resize(self, event: Resize) -> None:
        if event.size.width != self._width and self._bindings_ready:
            self.call_after_refresh(self.recompose)

    def bindings_changed(self, screen: Screen[object]) -> None:
        rebuilds = screen.app.app_focus and self.is_attached and screen is self.screen
        if not rebuilds:  # (Textual's own conditions: nothing is rebuilt now)
            super().bindings_changed(screen)
            return
        shown = self._keys_shown(screen)
        if self._bindings_ready and shown == self._shown:
            return
        self._shown = shown
        super().bindings_changed(screen)

    def _keys_shown(self, screen: Screen[object]) -> Shown:
        """What the footer draws: each shown binding's key, its display, words and state."""
        return tuple(
            (
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                enabled,
                tooltip,
            )
            for (_, binding, enabled, tooltip) in screen.active_bindings.values()
            if binding.show
        )
