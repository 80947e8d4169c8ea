"""/init: the prompt that asks the model to write or improve the project guide file in use."""

from __future__ import annotations

from pathlib import Path

from peri_cli.context.guides import PROJECT_CANDIDATES

DEFAULT_GUIDE = "AGENTS.md"


def guide_target(workspace: Path) -> tuple[str, bool]:
    """The guide file /init works on, and whether it exists: the first project guide there is
    (so an existing CLAUDE.md is improved, never shadowed by a new AGENTS.md), else AGENTS.md."""
    for name in PROJECT_CANDIDATES:
        if (workspace / name).is_file():
            return name, True
    return DEFAULT_GUIDE, False


def init_prompt(workspace: Path) -> str:
    name, exists = guide_target(workspace)
    task = (
        f"Improve the project guide {name}: keep what is still true, correct what is not, "
        "add what is missing, and remove what no longer applies"
        if exists
        else f"Write a project guide, {name}, at the root of the repository"
    )
    return (
        f"/init: {task}. It is read by coding agents (you, in later sessions) before they work "
        "here, so make it short, factual and specific to this repository.\n\n"
        "First study the repository: its README and docs, the build and package files, the CI "
        "configuration, the layout of the source and the tests, and a few representative "
        "files. Then write the guide with:\n"
        "- what the project is, in two or three sentences;\n"
        "- how to set it up, build it, run the tests (all, and a single test) and lint it, as "
        "exact commands;\n"
        "- the layout: the main folders and what lives in each;\n"
        "- the conventions a newcomer would get wrong (style, naming, error handling, "
        "testing habits), and traps you found.\n"
        f"Do not invent commands you have not seen evidence for. Change only {name}."
    )
