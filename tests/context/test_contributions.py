from pathlib import Path

from peri_cli.context.contributions import ContributionChain, RequestContext, default_chain
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
