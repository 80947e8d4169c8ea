"""A command's body and the typed arguments as the prompt's pieces: text, and the `` !`cmd` ``
lines to run before it is sent. One pass, as Claude Code does: the lines are found in the file's
own text (an argument cannot add one), `$ARGUMENTS` and `$1`… are filled in everywhere (the line
then runs as shown in its approval), and an output is put in as it is, never expanded again."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from peri_cli.extensions.skills.invocation import substitute_arguments, with_unused

# `` !`cmd` `` at the start of a line or after a space or bracket (not `wow!`...`, not in code).
BANG_LINE = re.compile(r"(?<![^\s(\[{])!`([^`\n]+)`")


@dataclass(frozen=True)
class Shell:
    """One `` !`cmd` `` line, its arguments filled in."""

    command: str


@dataclass(frozen=True)
class Expanded:
    """The prompt's pieces in order: text, and the shell lines whose output goes in their place."""

    pieces: tuple[str | Shell, ...]

    def commands(self) -> list[str]:
        return [p.command for p in self.pieces if isinstance(p, Shell)]

    def text_only(self) -> str:
        """The text without the lines: where the `@path`s to attach are looked for (an output
        attaches nothing)."""
        return "\n".join(p for p in self.pieces if isinstance(p, str))

    def assemble(self, outputs: Sequence[str]) -> str:
        """The prompt: each line replaced by its output (or why it did not run), in order."""
        given = iter(outputs)
        return "".join(p if isinstance(p, str) else next(given, "") for p in self.pieces)


def fill_variables(text: str, variables: Mapping[str, str] | None) -> str:
    """`text` with each `${NAME}` of `variables` (a plugin's `${CLAUDE_PLUGIN_ROOT}`) filled in;
    other `${...}` stay for the shell."""
    if not variables:
        return text
    names = "|".join(re.escape(n) for n in variables)
    return re.sub(rf"\$\{{({names})\}}", lambda m: variables[m.group(1)], text)


def expand_command(
    body: str,
    arguments: str,
    *,
    directory: Path | None = None,
    variables: Mapping[str, str] | None = None,
) -> Expanded:
    """The pieces of `body` for `/name arguments`: its source's `${NAME}` `variables` filled in
    (the file's own text only), then `$ARGUMENTS`, `$ARGUMENTS[N]` and `$1`, `$2`… (the first
    word is `$1`, as in Claude Code's commands; a position with no word stays as written, so
    `awk '{print $1}'` in a command's text survives) in the text and in each `!` line;
    arguments no placeholder took are appended as `ARGUMENTS: …`."""
    where = directory or Path()
    body = fill_variables(body, variables)
    pieces: list[str | Shell] = []
    used = False
    last = 0

    def fill(text: str) -> str:
        nonlocal used
        out, took = substitute_arguments(
            text, arguments, directory=where, positional=True, first=1, keep_missing=True
        )
        used = used or took
        return out

    for match in BANG_LINE.finditer(body):
        pieces.append(fill(body[last : match.start()]))
        pieces.append(Shell(fill(match.group(1))))
        last = match.end()
    pieces.append(fill(body[last:]))
    tail = with_unused("", arguments, used)
    if tail:
        pieces[-1] = pieces[-1].rstrip("\n") + tail  # type: ignore[union-attr]
    return Expanded(tuple(p for p in pieces if p != ""))
