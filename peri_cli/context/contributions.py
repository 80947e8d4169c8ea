"""Request-time contributions: a middleware chain computed per request, after the frozen part.

Contributions are never written to the transcript; they change freely without touching the cached
prefix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from peri_cli.base.safe_read import SafeReadError, read_text

# HEAD and a worktree's `.git` file hold one short line; anything longer is not git's.
MAX_GIT_STATE_BYTES = 4096
# A contributor takes the request context and returns text, or None to stay silent.
Contributor = Callable[["RequestContext"], str | None]


@dataclass
class RequestContext:
    workspace: Path
    turn: int = 0
    notes: list[str] = field(default_factory=list)  # session-local notes (tool hints, reminders)


@dataclass
class ContributionChain:
    """Named contributors in order; one returning None or raising adds nothing."""

    contributors: list[tuple[str, Contributor]] = field(default_factory=list)

    def add(self, name: str, contributor: Contributor) -> None:
        self.contributors.append((name, contributor))

    def remove(self, name: str) -> None:
        self.contributors = [(n, c) for n, c in self.contributors if n != name]

    def render(self, ctx: RequestContext) -> str:
        parts: list[str] = []
        for _name, contributor in self.contributors:
            try:
                text = contributor(ctx)
            except Exception:  # a broken contributor must never block a request
                continue
            if text:
                parts.append(text.strip())
        return "\n\n".join(parts)


def git_branch(ctx: RequestContext) -> str | None:
    """The checked-out branch, read from .git/HEAD (no subprocess on the request path).

    A command may have planted anything there (a FIFO, a link to /dev/zero, a huge file): such
    a HEAD costs the line, never a blocked or starved request."""
    for directory in (ctx.workspace, *ctx.workspace.parents):
        try:
            head = _head(directory / ".git")
        except SafeReadError:
            return None
        if head is None:
            continue
        if head.startswith("ref: refs/heads/"):
            return f"Current git branch: {head.removeprefix('ref: refs/heads/')}"
        return f"Git HEAD is detached at {head[:12]}"
    return None


def _head(dot_git: Path) -> str | None:
    """What HEAD says in the repository `dot_git` names (None: no repository there)."""
    if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
        pointer = _git_file(dot_git).removeprefix("gitdir:").strip()
        dot_git = (dot_git.parent / pointer).resolve()
    if not dot_git.is_dir():
        return None
    return _git_file(dot_git / "HEAD").strip()


def _git_file(path: Path) -> str:
    return read_text(path, max_bytes=MAX_GIT_STATE_BYTES)


def session_notes(ctx: RequestContext) -> str | None:
    return "\n".join(f"- {n}" for n in ctx.notes) if ctx.notes else None


def default_chain() -> ContributionChain:
    chain = ContributionChain()
    chain.add("git", git_branch)
    chain.add("notes", session_notes)
    return chain
