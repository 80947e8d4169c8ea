"""The policy as data, bubblewrap's command line and the Seatbelt profile made from it."""

from pathlib import Path

from peri_cli.base.settings_sandbox import SandboxFilesystem, SandboxNetwork, SandboxSettings
from peri_cli.permissions.rule_syntax import RuleSource, parse_rule
from peri_cli.permissions.sandbox_denials import explain
from peri_cli.permissions.sandbox_policy import (
    Protected,
    SandboxPlaces,
    SandboxPolicy,
    build_policy,
)
from peri_cli.sandbox import bwrap, seatbelt
from peri_cli.sandbox.protected import walk

WS = Path("/work/ws")
HOME = Path("/home/u")
# A repository with its hooks and config, as the walk finds it
FOUND = Protected((WS / ".git/hooks", WS / ".git/config"), (WS / ".git",))
PLACES = SandboxPlaces(WS, HOME, HOME / ".peri", Path("/tmp/peri-session-1"), {}, FOUND)


def policy(**settings: object) -> SandboxPolicy:
    return build_policy(SandboxSettings(enabled=True, **settings), PLACES, [], trusted=True)  # type: ignore[arg-type]


def test_defaults() -> None:
    p = policy()
    assert p.writable[:2] == (WS, Path("/tmp/peri-session-1"))
    assert HOME / ".peri" in p.read_only
    assert {HOME / ".ssh", HOME / ".aws", HOME / ".gnupg", HOME / ".netrc"} <= set(p.hidden)
    assert HOME / ".peri" / "trusted-workspaces.json" in p.hidden
    assert set(p.guarded) == {WS / ".claude", WS / ".peri", WS / ".agents"}  # stood in for
    assert set(p.protected) == {WS / ".git/hooks", WS / ".git/config"} and p.pinned == (
        WS / ".git",
    )
    assert Path("/tmp") in p.masked and Path("/run") in p.masked
    assert p.proxy_socket is None and p.env_extra["TMPDIR"] == "/tmp/peri-session-1"


def test_mounts_go_shallowest_first_so_deeper_paths_win() -> None:
    p = policy()
    kinds = {m.path: m.kind for m in p.mounts()}
    order = [m.path for m in p.mounts()]
    assert order.index(WS) < order.index(WS / ".git/hooks")
    assert kinds[WS] == "writable" and kinds[WS / ".git/hooks"] == "protected"
    assert p.writable_at(WS / "src/a.py") and not p.writable_at(WS / ".git/hooks/pre-commit")
    assert not p.writable_at(Path("/etc/passwd")) and not p.writable_at(HOME / ".bashrc")
    assert p.governing(HOME / ".ssh/id_rsa") == "hidden"


def test_settings_paths_and_domains() -> None:
    p = build_policy(
        SandboxSettings(
            enabled=True,
            filesystem=SandboxFilesystem(
                allowWrite=["~/cache"], denyRead=["secrets"], allowRead=["~/.ssh/known_hosts"]
            ),
            network=SandboxNetwork(allowedDomains=["pypi.org", "evil.com"]),
        ),
        PLACES,
        [
            parse_rule("WebFetch(domain:docs.python.org)", "allow", RuleSource("user")),
            parse_rule("WebFetch(domain:evil.com)", "deny", RuleSource("user")),
            parse_rule("WebFetch(domain:repo.example)", "allow", RuleSource("project")),
        ],
        trusted=False,
    )
    assert HOME / "cache" in p.writable and WS / "secrets" in p.hidden
    assert p.governing(HOME / ".ssh/known_hosts") == "reveal"
    assert p.domains == ("pypi.org", "docs.python.org")  # the untrusted project rule is not used
    assert p.denied_domains == ("evil.com",)


def test_bwrap_command_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("")
    tree = walk(ws)
    found = Protected(tuple(tree.paths), tuple(tree.git_dirs))
    places = SandboxPlaces(
        ws, tmp_path / "home", tmp_path / "home/.peri", tmp_path / "t", {}, found
    )
    (tmp_path / "t").mkdir()
    p = build_policy(SandboxSettings(enabled=True), places, [], trusted=True)
    plan = bwrap.build(p, ["bash", "-c", "true"], {"PATH": "/bin"}, ws, empty_dir=tmp_path / "e")
    argv = " ".join(plan.argv)
    for flag in ("--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net"):
        assert flag in argv
    assert f"--bind {ws} {ws}" in argv and "--proc /proc" in argv
    assert f"--ro-bind {ws}/.git/hooks {ws}/.git/hooks" in argv
    assert f"--ro-bind {tmp_path}/e {ws}/.claude" in argv  # missing: an empty stand-in
    assert plan.created == [ws / ".peri", ws / ".claude", ws / ".agents"]
    assert f"--bind {ws}/.git {ws}/.git" in argv  # pinned: it cannot be renamed away
    assert argv.endswith("-- bash -c true") and "--remount-ro /tmp" in argv
    assert plan.env["TMPDIR"] == str(tmp_path / "t") and "HTTP_PROXY" not in plan.env


def test_bwrap_with_the_proxy_relays_through_socat(tmp_path: Path) -> None:
    p = policy().with_proxy(Path("/run/peri/proxy.sock"))
    plan = bwrap.build(p, ["bash", "-c", "curl x"], {}, WS, empty_dir=tmp_path)
    assert plan.env["HTTPS_PROXY"] == f"http://127.0.0.1:{bwrap.RELAY_PORT}"
    assert "UNIX-CONNECT:/run/peri/proxy.sock" in plan.argv[-5]
    assert plan.argv[-3:] == ["bash", "-c", "curl x"]


def test_a_worktree_git_file_is_guarded_itself(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").write_text("gitdir: /elsewhere\n")
    places = SandboxPlaces(ws, tmp_path / "h", tmp_path / "h/.peri", tmp_path / "t", {})
    p = build_policy(SandboxSettings(enabled=True), places, [], trusted=True)
    plan = bwrap.build(p, ["true"], {}, ws, empty_dir=tmp_path / "e")
    assert f"--ro-bind {ws}/.git {ws}/.git" in " ".join(plan.argv)
    assert ws / ".git" not in plan.created


def test_seatbelt_profile_text() -> None:
    p = build_policy(
        SandboxSettings(
            enabled=True, network=SandboxNetwork(allowUnixSockets=["/srv/docker.sock"])
        ),
        PLACES,
        [],
        trusted=True,
    ).with_proxy(Path("/tmp/p.sock"))
    text = seatbelt.profile(p)
    assert text.startswith("(version 1)\n(deny default)")
    assert f'(allow file-write*\n  (subpath "{WS}")' in text
    assert f'(subpath "{WS}/.git/hooks")' in text.split("(deny file-write*")[1]
    assert f'(subpath "{HOME}/.ssh")' in text.split("(deny file-read*")[1]
    assert text.index("(allow file-write*") < text.index("(deny file-write*")  # later wins
    assert '(path-literal "/srv/docker.sock")' in text
    assert f'"localhost:{bwrap.RELAY_PORT}"' in text
    assert seatbelt.quote('a"b\\c') == '"a\\"b\\\\c"'


def test_explain_names_what_the_sandbox_held() -> None:
    p = policy()
    out = (
        "bash: line 1: ../outside.txt: Read-only file system\n"
        "touch: cannot touch '/etc/x': Permission denied\n"
        "cat: /home/u/.ssh/id_rsa: No such file or directory\n"
        "bash: .git/hooks/pre-commit: Read-only file system\n"
        "rm: cannot remove 'src/a.py': Permission denied\n"
    )
    note = explain(p, out, WS) or ""
    assert "write outside the workspace denied by the sandbox: /work/outside.txt" in note
    assert "write outside the workspace denied by the sandbox: /etc/x" in note
    assert "read denied by the sandbox (a protected secret): /home/u/.ssh/id_rsa" in note
    assert "protected path denied by the sandbox: /work/ws/.git/hooks/pre-commit" in note
    assert "src/a.py" not in note  # inside the workspace: the program's own business
    assert explain(p, "all fine\n", WS) is None


def test_peris_own_runtime_is_shown_only_where_a_mask_would_hide_it() -> None:
    """Issue 37 item 7: Peri installed under /tmp (masked by a fresh tmpfs) stays readable for
    its helper processes; one elsewhere, or inside the workspace, changes no mount."""
    runtime = (Path("/tmp/venv"), Path("/usr/lib/python3"), WS / ".venv", Path("/tmp/venv/bin"))
    places = SandboxPlaces(
        WS, HOME, HOME / ".peri", Path("/tmp/peri-session-1"), {}, runtime=runtime
    )
    p = build_policy(SandboxSettings(enabled=True), places, [], trusted=True)
    assert p.readable == (Path("/tmp/venv"),)
    assert p.governing(Path("/tmp/venv/bin/python")) == "readable"
    assert p.governing(WS / ".venv/bin/python") == "writable"  # as the workspace is
    assert p.governing(Path("/tmp/other")) == "mask"
    assert policy().readable == ()
