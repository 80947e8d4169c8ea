"""Which files a shell command removes, read from its syntax: the operands of `rm`, `unlink`,
`rmdir` and `git rm`. The working state lists them as deleted after a compaction (a file the
session deleted with Bash is as much its work as one it wrote).

Only what can be read exactly counts: a glob, a variable or a `cd` anywhere in the command
(relative paths would then mean another folder) leaves that operand, or the whole command, out.
It is a record of intent; the caller checks the disk for what the file is now."""

from __future__ import annotations

from peri_cli.permissions.shell_syntax import ShellParseError, SimpleCommand, parse

REMOVERS = frozenset({"rm", "unlink", "rmdir"})
MAX_OPERANDS = 50  # `rm` of a long generated list: the first ones tell enough


def removed_paths(command: str) -> tuple[str, ...]:
    """The paths `command` removes, as written in it, in order, each once."""
    try:
        script = parse(command)
    except ShellParseError:
        return ()
    if script.changes_directory:
        return ()
    found: list[str] = []
    for simple in script.commands:
        for path in _operands(simple):
            if path not in found:
                found.append(path)
    return tuple(found[:MAX_OPERANDS])


def _operands(simple: SimpleCommand) -> list[str]:
    argv = list(simple.argv)
    if argv and argv[0].value in ("sudo", "command"):
        argv = argv[1:]
    if len(argv) >= 2 and argv[0].value == "git" and argv[1].value == "rm":
        if any(w.value == "--cached" for w in argv):
            return []  # the file stays on disk
        argv = argv[1:]
    elif not argv or argv[0].value.rsplit("/", 1)[-1] not in REMOVERS:
        return []
    out: list[str] = []
    options_end = False
    for word in argv[1:]:
        if not options_end and word.value == "--":
            options_end = True
        elif not options_end and word.value.startswith("-") and word.value != "-":
            continue
        elif word.exact and word.value:
            out.append(word.value)
    return out
