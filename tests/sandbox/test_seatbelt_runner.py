"""macOS: Bash's command line under Seatbelt, `sandbox-exec -p PROFILE` before the command, from
the same policy as bubblewrap's (it cannot run here: the argv and environment are checked)."""

from __future__ import annotations

from pathlib import Path

from peri_cli.base.settings_sandbox import SandboxSettings
from peri_cli.permissions.sandbox_policy import SandboxPlaces, build_policy
from peri_cli.sandbox import seatbelt
from peri_cli.sandbox.probe import SEATBELT, Availability
from peri_cli.sandbox.runner import SeatbeltSandbox


def test_the_runner_wraps_commands_with_sandbox_exec(tmp_path: Path) -> None:
    ws, session = tmp_path / "ws", tmp_path / "session"
    ws.mkdir()
    session.mkdir()
    places = SandboxPlaces(ws, tmp_path / "home", tmp_path / "home/.peri", session, {})
    policy = build_policy(SandboxSettings(enabled=True), places, [], trusted=True)
    runner = SeatbeltSandbox(policy, lambda c: c.startswith("docker"))
    try:
        wrapped = runner.wrap(["bash", "-c", "echo hi"], {"PATH": "/usr/bin"}, ws)
        profile = seatbelt.profile(policy)
        assert wrapped.argv == ["/usr/bin/sandbox-exec", "-p", profile, "bash", "-c", "echo hi"]
        assert wrapped.env == {"PATH": "/usr/bin", "TMPDIR": str(session)}
        assert "HTTP_PROXY" not in wrapped.env  # no relay on macOS yet: no network inside
        assert f'(subpath "{ws}/.git")' in profile and "(deny default)" in profile  # none yet
        assert not (ws / ".claude").exists()  # Seatbelt needs no mount points
        wrapped.finish()
        assert runner.covers("ls") and not runner.covers("docker ps")
    finally:
        runner.close()


def test_seatbelt_availability_says_what_it_is() -> None:
    found = Availability(True, engine=SEATBELT)
    assert found.seatbelt and "Seatbelt (sandbox-exec) works" in found.describe()
    assert not Availability(True).seatbelt
