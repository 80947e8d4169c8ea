"""What an approval that keeps rules says it keeps. "Allow for this session", "always allow in
this project" and "always reject in this project" keep every rule the approval offers (one per
part of a compound command), so each label names every one of them, whole: a face wraps a long
label, never cuts it (`echo hi; cat notes.txt` is "Allow for this session (Bash(echo:*),
Bash(cat:*))", and a later `cat other.txt` runs unasked because the label said so)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from peri_cli.base.textsafe import visible

Keeping = Literal["session", "project", "reject"]

KEEPS: dict[Keeping, str] = {
    "session": "Allow for this session",
    "project": "Always allow in this project",
    "reject": "Always reject in this project",
}


def shown_rule(rule: str) -> str:
    """A rule as a label names it: on one line, control characters visible, nothing cut."""
    return " ".join(visible(rule).split())


def keeps_label(keeping: Keeping, rules: Sequence[str]) -> str:
    """`Allow for this session (Bash(echo:*), Bash(cat:*))`: the answer and every rule it keeps;
    just the answer when it keeps none."""
    head = KEEPS[keeping]
    if not rules:
        return head
    return f"{head} ({', '.join(shown_rule(r) for r in rules)})"


def label_pieces(keeping: Keeping, rules: Sequence[str]) -> list[str]:
    """`keeps_label`'s words, where a face may break the line: between the answer's words and
    after each rule's comma, never inside a rule (`Bash(npm run test:*)` stays whole)."""
    words = KEEPS[keeping].split()
    if not rules:
        return words
    shown = [shown_rule(r) for r in rules]
    marks = [","] * (len(shown) - 1) + [")"]
    return [
        *words,
        *(
            ("(" if i == 0 else "") + r + m
            for i, (r, m) in enumerate(zip(shown, marks, strict=True))
        ),
    ]
