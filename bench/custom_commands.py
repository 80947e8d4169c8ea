"""Custom commands at start: discovering N `.claude/commands` files vs discovering N skills (the
same folders, the same front matter), in the same rounds; and the start's worst case, a folder
at the file cap holding files at the size cap (each read only as far as its front matter).

    .venv/bin/python bench/custom_commands.py                # ~20 s
    .venv/bin/python bench/custom_commands.py --files 50 500 --runs 21
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util as u

from peri_cli.extensions.commands import COMMANDS
from peri_cli.extensions.custom_commands.catalog import MAX_COMMAND_BYTES
from peri_cli.extensions.custom_commands.discovery import MAX_COMMANDS_PER_SOURCE, load_commands
from peri_cli.extensions.skills.discovery import load_skills

FRONT = (
    "---\ndescription: Review the change {i}\nargument-hint: [pr]\n"
    "allowed-tools: Bash(git diff:*)\n---\n"
)
BODY = "Review PR #$1.\n\nStatus: !`git status --short`\n" * 20


def populate(root: Path, n: int, *, body: str = BODY) -> None:
    commands = root / "ws" / ".claude" / "commands"
    skills = root / "ws" / ".claude" / "skills"
    commands.mkdir(parents=True)
    for i in range(n):
        (commands / f"c{i:04d}.md").write_text(FRONT.format(i=i) + body)
        folder = skills / f"s{i:04d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: s{i:04d}\n" + FRONT.format(i=i)[4:] + body)


def timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - start


def one_size(n: int, runs: int, *, body: str = BODY, label: str = "") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "home").mkdir()
        populate(root, n, body=body)
        ws, home = root / "ws", root / "home"

        def commands() -> None:
            catalog = load_commands(home=home, workspace=ws, builtins=COMMANDS)
            assert len(catalog.commands) == n, catalog.warnings()[:3]

        def skills() -> None:
            load_skills(home=home, peri_home=home / ".peri", workspace=ws, builtin=home)

        c_times, s_times = [], []
        for _ in range(runs):  # interleaved rounds
            c_times.append(timed(commands))
            s_times.append(timed(skills))
        c, s = u.median(c_times), u.median(s_times)
        print(
            f"{label or f'{n} files'}: commands {u.ms(c)}, skills {u.ms(s)}, "
            f"ratio {c / s:.2f}x (medians of {runs})"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, nargs="*", default=[10, 100, MAX_COMMANDS_PER_SOURCE])
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args()
    u.banner("bench/custom_commands.py — discovery at start")
    for n in args.files:
        one_size(n, args.runs)
    big = "x" * (MAX_COMMAND_BYTES - 1024)
    at_cap = f"{MAX_COMMANDS_PER_SOURCE} files of 255 KiB"
    one_size(MAX_COMMANDS_PER_SOURCE, max(3, args.runs // 3), body=big, label=at_cap)


if __name__ == "__main__":
    main()
