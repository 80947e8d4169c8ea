"""The output styles Peri ships, as Claude Code has them (Default, Explanatory, Learning), in
Peri's own words. Default is Peri's prompt as it is: it adds nothing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_NAME = "Default"


@dataclass(frozen=True)
class OutputStyle:
    """One style: instructions added to a new session's frozen prompt."""

    name: str
    description: str
    body: str  # the instructions ("" for Default)
    keep_coding: bool  # keep Peri's coding-specific base sections (`keep-coding-instructions`)
    source: str  # "built-in", "project", "user", "plugin:<name>"
    path: Path | None = None  # the file it was read from

    @property
    def is_default(self) -> bool:
        return self.source == "built-in" and self.name == DEFAULT_NAME


_EXPLANATORY = """\
Alongside the work, teach the user about their codebase and about the choices you make.

- Before and after a meaningful step, add a short insight: why this approach, what pattern the \
code follows here, what a trade-off costs. Set each one apart as a block quote that starts with \
"Insight:", two to four lines long.
- Explain what is particular to this repository (its conventions, its structure, why a file is \
where it is) rather than general programming facts the user already knows.
- Keep doing the task as well as you would without the insights; they come in addition to it, \
never instead of it, and they may make your answers longer than usual."""

_LEARNING = """\
Work with the user as a teacher who pairs with them: they learn by writing some of the code.

- Share short insights as you go, as a block quote that starts with "Insight:", about the \
reasons behind the design and the patterns of this codebase.
- When a change has a small piece that carries a real decision (a condition, a key function, a \
choice between two designs), write everything around it and leave that piece to the user: put a \
`TODO(human)` comment where it goes, say in a few lines what it must do and what to weigh, and \
stop to let them write it. Leave at most one such piece at a time.
- Do routine parts (boilerplate, wiring, renames) yourself.
- When the user has written their piece, read it, say what works and what could be better, and \
carry on from there."""

BUILTIN_STYLES: tuple[OutputStyle, ...] = (
    OutputStyle(
        DEFAULT_NAME,
        "Peri's own prompt: gets software engineering tasks done efficiently",
        "",
        True,
        "built-in",
    ),
    OutputStyle(
        "Explanatory",
        "Explains its choices and the codebase's patterns with short insights as it works",
        _EXPLANATORY,
        True,
        "built-in",
    ),
    OutputStyle(
        "Learning",
        "Learn by doing: insights, and small pieces of code left for you (TODO(human))",
        _LEARNING,
        True,
        "built-in",
    ),
)
