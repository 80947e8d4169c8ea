"""Telling a user who looks elsewhere that Peri waits for them: an approval, a question, or an
ended turn, only while the terminal is not focused (focus events, DECSET 1004, which Textual
turns on). How is Claude Code's `preferredNotifChannel`; the `Notification` hook fires for each,
whatever the channel (a user may send it on with their own command). `text` is Peri's own fixed
words, never model text."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from peri_cli.agent.host import SessionHost
    from peri_cli.base.settings import Settings

Channel = Literal["auto", "iterm2", "ghostty", "kitty", "terminal_bell", "notifications_disabled"]
# Claude Code's notification types, which a Notification hook's matcher names.
Kind = Literal["permission_prompt", "elicitation_dialog", "idle_prompt"]


def channel_of(settings: Settings, env: Mapping[str, str]) -> Channel:
    """The channel to use: the setting, `notifications: false` as disabled, `auto` resolved
    by what the terminal says it is."""
    chosen = settings.preferredNotifChannel
    if chosen is None:
        chosen = "auto" if settings.notifications else "notifications_disabled"
    if chosen != "auto":
        return chosen
    if env.get("TERM_PROGRAM") == "iTerm.app":
        return "iterm2"
    if env.get("TERM_PROGRAM") == "ghostty" or env.get("TERM") == "xterm-ghostty":
        return "ghostty"
    if env.get("TERM") == "xterm-kitty" or env.get("KITTY_WINDOW_ID"):
        return "kitty"
    return "auto"


def signal_for(channel: Channel, text: str) -> tuple[bool, str]:
    """(ring the bell, the escape sequence to write) for `channel`. `auto` on a terminal Peri
    cannot name rings and sends OSC 9, which many terminals show and the rest ignore."""
    safe = text.isprintable() and "\x1b" not in text and ";" not in text
    if channel == "notifications_disabled":
        return False, ""
    if channel == "terminal_bell" or not safe:
        return True, ""
    if channel == "iterm2":
        return False, f"\x1b]9;{text}\x07"
    if channel == "ghostty":
        return False, f"\x1b]777;notify;Peri;{text}\x07"
    if channel == "kitty":
        return False, f"\x1b]99;i=peri:d=0;{text}\x1b\\"
    return True, f"\x1b]9;{text}\x07"


def send(
    host: SessionHost | None,
    focused: bool,
    text: str,
    kind: Kind,
    *,
    run: Callable[[Coroutine[Any, Any, object]], object],
    bell: Callable[[], None],
    write: Callable[[str], None],
) -> bool:
    """Notify, if the terminal is not `focused`: the Notification hook (started with `run`),
    then the channel's signal. Whether a signal went out."""
    if host is None or focused:
        return False
    hooks = host.agent.hooks if host.agent is not None else None
    if hooks is not None and hooks.has("Notification"):
        run(hooks.run("Notification", message=text, notification_type=kind))
    rings, sequence = signal_for(channel_of(host.settings, host.env), text)
    if rings:
        bell()
    if sequence:
        write(sequence)
    return rings or bool(sequence)


def nowhere(_sequence: str) -> None:
    """Where a signal goes with no terminal to write it to (a test's headless app)."""
