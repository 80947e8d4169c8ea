"""What an approval shows: the call exactly as it would run, in full, and the answers it offers.
Pure (input -> Content).

A Bash command keeps its line breaks (numbered, so two commands never read as one), a Write or
an Edit names the path where it really lands and shows every line of its diff, anything else
shows its whole input. Nothing is cut: the approval scrolls instead."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.content import Content

from peri_cli.tui.diffs import content_lines, diff_for, file_diff, render_diff
from peri_cli.tui.format import plain
from peri_cli.tui.paths import shown_path

if TYPE_CHECKING:
    from peri_cli.base.events import PermissionAnswer

_DIFF_TEXT_KEYS = frozenset({"file_path", "content", "old_string", "new_string"})
NETWORK = "Network"  # the sandbox's proxy asking about a new domain (`{"domain": ...}`)
# Where "always" keeps a domain (`sandbox.network.allowedDomains` of a settings layer, read back
# by the proxy next session), as the Network question offers them: the personal file first (the
# default, as other approvals' "always"), then the shared one, then the user's own.
NETWORK_LAYERS = (
    ("local", ".peri/settings.local.json", "Always, mine here"),
    ("project", ".peri/settings.json", "Always, shared here"),
    ("user", "user settings", "Always, all my projects"),
)
NETWORK_SAVED_TO = "sandbox.network.allowedDomains"
SAME_RULES_IN_PROJECT = "Always allow the same rules in this project"


def network_domain(tool: str, tool_input: dict[str, Any]) -> str | None:
    """The domain a sandboxed command wants to reach, when this is the proxy's question."""
    domain = tool_input.get("domain")
    return domain if tool == NETWORK and isinstance(domain, str) else None


def subject(tool: str, tool_input: dict[str, Any]) -> Content:
    """What "Allow …?" asks about: the tool, or the domain a sandboxed command wants."""
    domain = network_domain(tool, tool_input)
    if domain is None:
        return plain(tool)
    return Content.assemble("a sandboxed command to reach ", plain(domain, "bold"))


def approval_body(
    tool: str, tool_input: dict[str, Any], workspace: Path | None, current: str | None = None
) -> Content:
    """The whole call, one logical line per line of what it would run or write (an Edit's or
    a Write's diff against the file's `current` text, numbered, when it is known)."""
    domain = network_domain(tool, tool_input)
    if domain is not None:
        return Content.assemble(
            "A sandboxed command wants to reach ", plain(domain, "bold"), " (through the proxy)"
        )
    lines: list[Content] = []
    command = tool_input.get("command")
    diff = file_diff(tool, tool_input, current) or diff_for(tool, tool_input)
    if tool == "Bash" and isinstance(command, str):
        lines += _numbered(content_lines(command) or [""])
        rest = {k: v for k, v in tool_input.items() if k != "command"}
    elif diff is not None:
        lines += _target(tool_input.get("file_path"), workspace)
        lines.append(render_diff(diff) if diff else Content.styled("(no change)", "dim"))
        rest = {k: v for k, v in tool_input.items() if k not in _DIFF_TEXT_KEYS}
    else:
        for key in ("file_path", "path"):
            if isinstance(tool_input.get(key), str):
                lines += _target(tool_input[key], workspace, key)
        rest = tool_input
    for key, value in rest.items():
        text = (
            value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        )
        lines.append(Content.assemble(plain(f"{key}: ", "dim"), plain(text)))
    return Content("\n").join(lines)


def line_count(tool: str, tool_input: dict[str, Any], current: str | None = None) -> int:
    """The lines the user approves: the command's, or the diff's, or the input's."""
    command = tool_input.get("command")
    if tool == "Bash" and isinstance(command, str):
        return len(content_lines(command) or [""])
    if network_domain(tool, tool_input) is not None:
        return 1  # (its body is one sentence)
    diff = file_diff(tool, tool_input, current) or diff_for(tool, tool_input)
    if diff is not None:
        return len(diff)
    return len(json.dumps(tool_input, ensure_ascii=False, indent=1, default=str).split("\n"))


def _numbered(lines: list[str]) -> list[Content]:
    if len(lines) == 1:
        return [plain(lines[0])]
    width = len(str(len(lines)))
    return [
        Content.assemble((f"{n:>{width}} │ ", "dim"), plain(line))
        for n, line in enumerate(lines, 1)
    ]


def _target(raw: object, workspace: Path | None, key: str = "file_path") -> list[Content]:
    if not isinstance(raw, str):
        return []
    shown = shown_path(raw, workspace)
    label = "path" if key == "path" else "file"
    lines = [Content.assemble((f"{label}: ", "dim"), plain(shown, "bold"))]
    if shown != raw:
        lines.append(Content.assemble(("  as written: ", "dim"), plain(raw, "dim")))
    if workspace is not None and shown.startswith(os.sep):
        lines.append(Content.styled("  outside the workspace", "$warning"))
    return lines


# --- the choices ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """One answer an approval offers; `key` is its letter (the number is its place)."""

    answer: PermissionAnswer
    label: str
    key: str = ""
    note: bool = False  # a deny that first asks for a note to the model
    keep_in: str = ""  # "always" for a domain: the settings layer that keeps it
    # Where the label may break (between words, after a rule's comma; never inside a rule):
    # a label that names rules wraps under itself at any width, nothing cut.
    pieces: tuple[str, ...] = ()

    def rows(self, width: int) -> list[str]:
        """The label in rows of at most `width` columns (a piece wider than that has a row of
        its own, and the widget wraps it further)."""
        if not self.pieces or width <= 0:
            return [self.label]
        rows: list[str] = []
        for piece in self.pieces:
            if rows and len(rows[-1]) + 1 + len(piece) <= width:
                rows[-1] += " " + piece
            else:
                rows.append(piece)
        return rows


def choices_for(suggestions: Sequence[str], tool: str = "") -> list[Choice]:
    """Allow once; allow the suggested rules for the session or always in this project (only
    when there are rules to offer); deny; deny with a note. A domain: once, always, deny."""
    if tool == NETWORK:
        # (the domain is in the question: each label keeps to one row at 60 columns)
        return [
            Choice("allow", "Allow once (this session)", "y"),
            *(
                Choice("allow_project", f"{label} ({file})", "p" if i == 0 else "", keep_in=layer)
                for i, (layer, file, label) in enumerate(NETWORK_LAYERS)
            ),
            Choice("deny", "Deny", "n"),
        ]
    from peri_cli.permissions.remembering import keeps_label, label_pieces

    out = [Choice("allow", "Allow once", "y")]
    if suggestions:  # each names every rule it keeps (CONTRACT.md §8), wrapped, never cut
        out.append(
            Choice(
                "allow_session",
                keeps_label("session", suggestions),
                "a",
                pieces=tuple(label_pieces("session", suggestions)),
            )
        )
        # (the same rules, named once: at 60x20 a long list twice would push the command off)
        out.append(Choice("allow_project", SAME_RULES_IN_PROJECT, "p"))
    out.append(Choice("deny", "Deny", "n"))
    out.append(Choice("deny", "Deny with a note to the model…", note=True))
    return out


def record_text(answer: PermissionAnswer | None, note: str = "") -> str:
    """What became of an approval, for its one-line record."""
    if answer == "deny" and note:
        return f"denied, with a note: {note}"
    return RECORD.get(answer or "", "not answered (the turn was stopped)")


def network_record(domain: str, answer: PermissionAnswer | None, keep_in: str) -> str:
    """What became of a Network question, for its one-line record."""
    if answer == "allow_project":
        file = next((f for layer, f, _ in NETWORK_LAYERS if layer == keep_in), NETWORK_LAYERS[0][1])
        return f"{domain} always allowed (saved to {NETWORK_SAVED_TO} in {file})"
    if answer in ("allow", "allow_session"):
        return f"{domain} allowed for this session"
    if answer == "deny":
        return f"{domain} denied"
    return f"{domain} not answered (denied)"


RECORD: dict[str, str] = {
    "allow": "allowed once",
    "allow_session": "allowed for this session",
    "allow_project": "always allowed in this project",
    "deny": "denied",
}
