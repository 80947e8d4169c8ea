"""The `Bash(...)` rule the approval offers for one simple command: a prefix where the first
words say what runs (`git diff:*`, `npm run test:*`), the exact command where they say little
(wrappers, shells, interpreters, commands that write the files their arguments name), none
where no rule can say what it allows (a shell reading its program from stdin).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from peri_cli.permissions.shell_match import SHELLS as _SHELLS
from peri_cli.permissions.shell_match import WRAPPERS as _WRAPPERS
from peri_cli.permissions.shell_match import deny_views
from peri_cli.permissions.shell_syntax import SimpleCommand, Word

# Commands that write, move, delete or change the mode or owner of the files their arguments
# name: `Bash(cp:*)` would let the next call overwrite any file (`src/conftest.py`, a Makefile),
# an edit the user never saw, so only the command as shown is offered. (`sed`, `awk` and `find`
# are here for `-i`, `-exec` and friends; `sort -o` and the like are left to the arguments check.)
_CHANGES_FILES = frozenset(
    {"cp", "mv", "tee", "ln", "install", "rsync", "scp", "rm", "rmdir", "mkdir", "touch"}
    | {"truncate", "shred", "unlink", "chmod", "chown", "chgrp", "dd", "tar", "unzip", "zip"}
    | {"gzip", "gunzip", "patch", "split", "find", "awk", "sed"}
)
# Interpreters: each runs a program given in its arguments, or read from its stdin when none is.
_INTERPRETERS = frozenset(
    {"python", "python3", "python2", "pypy", "pypy3", "node", "nodejs", "perl", "ruby", "php"}
    | {"deno", "bun", "lua", "luajit", "Rscript", "R", "julia", "tclsh", "osascript", "irb"}
)
_VERSIONED_INTERPRETER = re.compile(r"(?:python|pypy|node|perl|ruby|php|lua)[0-9.]+")
# Commands that run another command or program named in their arguments (and editors, which
# can): their first word says nothing of what runs.
_RUN_OTHERS = frozenset(
    {"eval", "source", ".", "npx", "bunx", "uvx", "pipx", "watch", "parallel", "flock"}
    | {"strace", "ltrace", "su", "runuser", "chroot", "vi", "vim", "nvim", "emacs"}
)
# Commands whose first word says little: a prefix rule for them would allow almost anything, so
# only the exact command is offered.
_NO_PREFIX = (
    _WRAPPERS
    | _SHELLS
    | _CHANGES_FILES
    | _INTERPRETERS
    | _RUN_OTHERS
    | frozenset({"ssh", "curl", "wget"})
)
# Commands whose second word is a subcommand worth keeping in the prefix (`git diff`, `npm test`).
_SUBCOMMANDS = frozenset(
    {"git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "podman", "kubectl", "helm", "pip"}
    | {"pip3", "uv", "poetry", "pdm", "hatch", "gh", "brew", "make", "just", "dotnet", "mvn"}
    | {"gradle", "terraform", "conda", "rustup", "apt", "apt-get", "systemctl", "tox", "nox"}
)
# Subcommands that run the program named next (`npm run test`, `uv run pytest`): the prefix keeps
# that name, which must be there and must not be an interpreter or a shell.
_RUNNERS = frozenset({"run", "exec", "x", "run-script", "dlx"})
# Subcommands whose next word is a subcommand again (`uv tool run ruff`, `docker compose exec`).
_RUNNER_GROUPS = frozenset({"tool", "compose"})
_SUBCOMMAND = re.compile(r"[a-z][a-z0-9-]*")
_SCRIPT_NAME = re.compile(r"[A-Za-z0-9][\w:.-]*")
# Options of an interpreter that take a value: the value is not the program (`python -W x`).
_INTERPRETER_OPTION_ARGS = frozenset({"-W", "-X", "-r", "--require", "-I", "--import"})


def _no_prefix(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return base in _NO_PREFIX or _VERSIONED_INTERPRETER.fullmatch(base) is not None


def reads_program_from_stdin(command: SimpleCommand) -> bool:
    """A shell or interpreter given no program (`echo x | bash`, `python3 -`, `bash < f`,
    `xargs sh`): whatever reaches its stdin runs, so no rule can say what it allows."""
    for words in deny_views(command).views:
        if not words:
            continue
        name = words[0].value.rsplit("/", 1)[-1]
        shell = name in _SHELLS
        if not shell and name not in _INTERPRETERS and not _VERSIONED_INTERPRETER.fullmatch(name):
            continue
        flags = [w.value for w in words[1:] if w.value.startswith("-") and w.value != "-"]
        short = "".join(f[1:] for f in flags if not f.startswith("--"))
        if shell and "c" in short:
            continue  # `sh -c '...'`: the program is in the words (and judged as a view)
        if shell and "s" in short:
            return True
        operands: list[str] = []
        skip = False
        for word in words[1:]:
            if skip:
                skip = False
            elif word.value in _INTERPRETER_OPTION_ARGS:
                skip = True
            elif word.value == "-" or not word.value.startswith("-"):
                operands.append(word.value)
        if not operands or operands[0] == "-":
            return True
    return False


def command_rule(command: SimpleCommand) -> str | None:
    words = command.words
    if not words or not all(w.exact for w in words[: min(len(words), 4)]):
        return None
    name = words[0].value
    if command.assignments or _no_prefix(name):
        return _exact_rule(words)
    if name not in _SUBCOMMANDS:
        return f"Bash({_join([name])}:*)"
    # A bare tool (`make`) says nothing of what it will be asked next; an option before the
    # subcommand (`git -c core.sshCommand=...`, `git -C dir`) can make any subcommand run
    # anything; `yarn node` runs node: the exact command only.
    sub = words[1].value if len(words) > 1 else ""
    if not _SUBCOMMAND.fullmatch(sub) or _no_prefix(sub):
        return _exact_rule(words)
    prefix = [name, sub]
    if sub in _RUNNER_GROUPS:  # `uv tool:*` would cover `uv tool run python` too
        group_sub = words[2].value if len(words) > 2 else ""
        if not _SUBCOMMAND.fullmatch(group_sub):
            return _exact_rule(words)
        prefix.append(group_sub)
    if prefix[-1] in _RUNNERS:
        program = words[len(prefix)].value if len(words) > len(prefix) else ""
        if not _SCRIPT_NAME.fullmatch(program) or _no_prefix(program):
            return _exact_rule(words)
        prefix.append(program)
    return f"Bash({_join(prefix)}:*)"


def _exact_rule(words: Sequence[Word]) -> str | None:
    if not all(w.exact for w in words):
        return None
    return f"Bash({_join(w.value for w in words)})"


def _join(words: Iterable[str]) -> str:
    return " ".join(w if re.fullmatch(r"[\w@%+=:,./-]+", w) else _quote(w) for w in words)


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"
