"""The TUI's keys in one place: the app's bindings (`PeriApp.BINDINGS`, whose actions `keys.Keys`
carries out), the key table /help shows and the README repeats, and what the prompt understands
besides commands."""

from __future__ import annotations

from textual.binding import Binding, BindingType

BINDINGS: list[BindingType] = [
    Binding("ctrl+c", "interrupt", "Cancel · twice quits", priority=True),
    Binding("escape", "escape", "Back", show=False),
    Binding("pageup", "page(-1)", "Page up", show=False, priority=True),
    Binding("pagedown", "page(1)", "Page down", show=False, priority=True),
    Binding("ctrl+end", "bottom", "Bottom", show=False, priority=True),
    Binding("ctrl+o", "toggle_folds", "Folds", priority=True),
    Binding("ctrl+l", "redraw", "Redraw"),
    Binding("ctrl+down", "agents_strip", "SubAgents", show=False, priority=True),
    Binding("ctrl+up", "focus_approval", "Approval", show=False, priority=True),
    Binding("down", "agents_strip_from_prompt", show=False, priority=True),
    Binding("shift+tab", "cycle_mode", "Mode", show=False, priority=True),
    Binding("ctrl+r", "search_history", "History", show=False, priority=True),
]

# The key table as /help shows it (the README repeats it); `BINDINGS` above and the widgets'
# bindings implement it.
KEYS = [
    ("Enter", "send the prompt (queued while a turn runs)"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("↑ / ↓", "prompt history (all sessions); move in a menu or an approval"),
    ("Tab", "complete a /command or @path; else move focus to the folds"),
    (
        "Esc",
        "the first that applies: close a popup or menu · deny the pending approval · "
        "back to the prompt (from a fold) · interrupt the running turn. It never clears "
        "typed text",
    ),
    ("Esc Esc", "on an empty prompt while idle: /rewind (back to before one of your prompts)"),
    ("Ctrl+C", "interrupt the running turn, else clear the prompt; twice when idle quits"),
    (
        "Shift+Tab",
        "cycle the permission mode: default → accept-edits → plan (→ bypass if started in it)",
    ),
    (
        "Ctrl+R",
        "search the prompt history (fuzzy, this workspace first); Enter puts it in the prompt",
    ),
    (
        "Ctrl+↓",
        "while SubAgents run: focus their strip (↓ too, from an empty prompt); ↑/↓ pick one, "
        "Enter opens its pane, x stops it, Esc goes back",
    ),
    (
        "In a pane",
        "↑/↓ PgUp/PgDn scroll · End follows · ←/→ the next SubAgent · x stop · Esc close",
    ),
    ("Ctrl+↑", "go to the pending approval (it waits there while you type a message)"),
    ("PgUp / PgDn", "scroll the conversation (the approval, while one is pending)"),
    ("Ctrl+End", "back to the bottom, following new output"),
    ("Ctrl+O", "expand every fold (tool calls, thinking, summaries), or fold them all"),
    ("Enter, click", "on a fold's title: expand or fold it; typing still goes to the prompt"),
    (
        "1–5, y a p n",
        "answer an approval: allow once (y), allow its rules for the session (a), always in "
        "this project (p), deny (n), deny with a note to the model (5)",
    ),
    ("Ctrl+L", "redraw the screen"),
]

# What the prompt understands besides commands (/help and the README show it).
INPUT = [
    ("@path", "attach a file (as Read shows it), a folder's listing or an image, on send"),
    ("paste an image", "a path to an image, or image data: attached, shown as [image #N]"),
    (
        "paste 20+ lines",
        "shown as [Pasted text #N +L lines], sent whole in its place; Up brings back all of it",
    ),
    ("!command", "run a shell command yourself (no approval); the model sees it and its output"),
]
