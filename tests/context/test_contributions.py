import contextlib
import os
import threading
from pathlib import Path

from peri_cli.context.contributions import (
    ContributionChain,
    RequestContext,
    default_chain,
    git_branch,
)
from peri_cli.extensions.commands import COMMANDS, parse_command


def test_chain_renders_in_order_and_skips_silent_or_broken(tmp_path: Path) -> None:
    chain = ContributionChain()
    chain.add("a", lambda ctx: "first")
    chain.add("silent", lambda ctx: None)
    chain.add("broken", lambda ctx: 1 / 0)  # type: ignore[arg-type, return-value]
    chain.add("b", lambda ctx: f"turn {ctx.turn}")
    assert chain.render(RequestContext(workspace=tmp_path, turn=3)) == "first\n\nturn 3"
    chain.remove("a")
    assert chain.render(RequestContext(workspace=tmp_path)) == "turn 0"


def test_git_branch_is_read_per_request(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    chain = default_chain()
    ctx = RequestContext(workspace=tmp_path)
    assert "Current git branch: main" in chain.render(ctx)
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/feature/x\n")
    assert "Current git branch: feature/x" in chain.render(ctx)
    ctx.notes.append("remember the tests")
    assert chain.render(ctx).endswith("- remember the tests")


def test_git_branch_of_a_worktree_follows_its_pointer_file(tmp_path: Path) -> None:
    gitdir = tmp_path / "main" / ".git" / "worktrees" / "wt"
    gitdir.mkdir(parents=True)
    (gitdir / "HEAD").write_text("ref: refs/heads/reads\n")
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text(f"gitdir: {gitdir}\n")
    assert git_branch(RequestContext(workspace=tmp_path / "wt")) == "Current git branch: reads"


def _in_thread(ctx: RequestContext) -> tuple[threading.Thread, list[str | None]]:
    """git_branch run where a hang cannot stop the test (the thread is a daemon)."""
    got: list[str | None] = []
    thread = threading.Thread(target=lambda: got.append(git_branch(ctx)), daemon=True)
    thread.start()
    thread.join(timeout=20)
    return thread, got


def _unblock(fifo: Path) -> None:
    """Open the FIFO's other end (a reader is waiting, so this does not block) and close it."""
    with contextlib.suppress(OSError):  # nobody was waiting on it
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_issue37_item5_a_fifo_at_head_is_not_waited_for(tmp_path: Path) -> None:
    """A FIFO planted at .git/HEAD (or at the HEAD a worktree's pointer names) gives no branch
    line instead of blocking every request."""
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    os.mkfifo(tmp_path / "ws" / ".git" / "HEAD")
    gitdir = tmp_path / "real"
    gitdir.mkdir()
    os.mkfifo(gitdir / "HEAD")
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text(f"gitdir: {gitdir}\n")
    for workspace, fifo in (
        (tmp_path / "ws", tmp_path / "ws" / ".git" / "HEAD"),
        (tmp_path / "wt", gitdir / "HEAD"),
    ):
        thread, got = _in_thread(RequestContext(workspace=workspace))
        _unblock(fifo)
        assert not thread.is_alive(), "git_branch waited for a writer to the FIFO"
        assert got == [None]


def test_issue37_item5_head_linked_to_dev_zero_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").symlink_to("/dev/zero")
    assert git_branch(RequestContext(workspace=tmp_path)) is None
    (tmp_path / ".git" / "HEAD").unlink()
    (tmp_path / ".git" / "HEAD").write_bytes(b"ref: refs/heads/" + b"x" * (1 << 20))
    assert git_branch(RequestContext(workspace=tmp_path)) is None  # no megabyte branch name


def test_no_git_no_contribution(tmp_path: Path) -> None:
    assert default_chain().render(RequestContext(workspace=tmp_path)) == ""


def test_known_commands_parse_and_unknown_words_do_not() -> None:
    inv = parse_command("/compact keep the API decisions")
    assert inv is not None and inv.command.name == "compact"
    assert inv.argument == "keep the API decisions"
    assert parse_command("/clear") is not None
    assert parse_command("/etc/hosts is odd") is None
    assert parse_command("/frobnicate") is None
    assert parse_command("hello /clear") is None
    assert all(c.description for c in COMMANDS.values())
