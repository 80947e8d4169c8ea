"""Which files a shell command removes, read from its syntax (the working state lists them)."""

from __future__ import annotations

import pytest

from peri_cli.permissions.shell_removes import removed_paths


@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("rm old.txt", ("old.txt",)),
        ("rm -rf build dist && make", ("build", "dist")),
        ("rm -- -weird.txt", ("-weird.txt",)),
        ("unlink a; rmdir empty/", ("a", "empty/")),
        ("git rm -q src/gone.py", ("src/gone.py",)),
        ("/bin/rm 'with space.txt'", ("with space.txt",)),
        ("echo $(rm inner.txt)", ("inner.txt",)),
        ("rm a a", ("a",)),
    ],
)
def test_operands_of_the_removers(command: str, paths: tuple[str, ...]) -> None:
    assert removed_paths(command) == paths


@pytest.mark.parametrize(
    "command",
    [
        "rm *.log",  # a glob: which files is not in the text
        "rm $TARGET",
        "cd sub && rm x",  # relative to another folder
        "git rm --cached kept.py",  # the file stays on disk
        "echo rm x",
        "rm 'unclosed",
        "ls",
    ],
)
def test_what_cannot_be_read_exactly_is_left_out(command: str) -> None:
    assert removed_paths(command) == ()
