"""/help and the README list every command and key (issue 15: the tables stay in step)."""

from __future__ import annotations

from pathlib import Path

from peri_cli.extensions.commands import COMMANDS
from peri_cli.tui.keymap import INPUT, KEYS

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_the_readme_lists_every_command_key_and_prompt_form() -> None:
    for command in COMMANDS.values():
        assert f"| `/{command.name}" in README, command.name
    for key, _ in KEYS:
        assert f"| {key.replace('↑ / ↓', 'Up / Down')} |" in README, key
    for form, _ in INPUT:
        assert form in README, form
