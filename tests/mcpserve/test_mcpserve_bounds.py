"""Issue 40, the bounds of `peri mcp serve` (CONTRACT.md §14), with the official `mcp` client: a
mode looser than the server's, a `cwd` outside the root (a symlink pointing out included), a
folder other than the server's own without --root, a server in $HOME, too many turns and a
session outside the root are refused naming the bound; a user's settings cannot loosen a call."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import Peri
from tests.mcpserve.conftest import serving
from tests.mcpserve.test_mcpserve_calls import call


def write(path: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "Write", "input": {"file_path": path, "content": "x\n"}}]}


async def test_a_looser_mode_is_refused_naming_the_bound(peri: Peri) -> None:
    async with serving(peri) as client:
        bypass = await call(client, "peri", {"prompt": "go", "permission_mode": "bypass"})
        edits = await call(client, "peri", {"prompt": "go", "permission_mode": "acceptEdits"})
        odd = await call(client, "peri", {"prompt": "go", "permission_mode": "yolo"})
        plan = await call(client, "peri", {"prompt": "go", "permission_mode": "plan"})
    assert bypass.is_error
    assert "'bypass' is looser than this server's bound --permission-mode default" in (
        bypass.content[0].text
    )
    assert edits.is_error and "'accept-edits' is looser" in edits.content[0].text
    assert odd.is_error and "unknown permission_mode 'yolo'" in odd.content[0].text
    assert not plan.is_error and plan.structured_content["permission_mode"] == "plan"
    assert len(peri.server.bodies) == 1  # the refused calls never reached the model


async def test_a_server_started_looser_allows_up_to_its_bound(peri: Peri) -> None:
    peri.server.set_script([write(str(peri.workspace / "made.txt")), {"text": "written"}])
    async with serving(peri, "--permission-mode", "accept-edits") as client:
        bypass = await call(client, "peri", {"prompt": "go", "permission_mode": "bypass"})
        done = await call(client, "peri", {"prompt": "go"})
    assert bypass.is_error and "--permission-mode accept-edits" in bypass.content[0].text
    assert not done.is_error and done.structured_content["permission_mode"] == "accept-edits"
    assert (peri.workspace / "made.txt").read_text() == "x\n"


async def test_the_users_settings_cannot_loosen_a_call(peri: Peri) -> None:
    home = peri.home / ".peri"
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"permission_mode": "bypass"}))
    peri.server.set_script([write(str(peri.workspace / "made.txt")), {"text": "tried"}])
    async with serving(peri) as client:  # a client without elicitation: headless rules
        result = await call(client, "peri", {"prompt": "go"})
    assert not (peri.workspace / "made.txt").exists()
    denials = result.structured_content["permission_denials"]
    assert [d["tool_name"] for d in denials] == ["Write"], result
    assert "1 tool call was denied (Write) in permission mode 'default'" in result.content[0].text


async def test_a_cwd_outside_the_root_is_refused_a_symlink_pointing_out_too(
    peri: Peri, tmp_path: Path
) -> None:
    root = peri.workspace
    (root / "sub").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "out-link").symlink_to(outside)
    peri.server.set_script([{"text": "in sub"}])
    async with serving(peri, "--root", str(root), cwd=tmp_path) as client:
        far = await call(client, "peri", {"prompt": "go", "cwd": str(outside)})
        link = await call(client, "peri", {"prompt": "go", "cwd": str(root / "out-link")})
        up = await call(client, "peri", {"prompt": "go", "cwd": "../outside"})
        sub = await call(client, "peri", {"prompt": "go", "cwd": "sub"})
    for refused in (far, link, up):
        assert refused.is_error, refused
        assert f"outside this server's bound --root {root}" in refused.content[0].text
    assert f"(resolved: {outside})" in link.content[0].text
    assert not sub.is_error and sub.content[0].text == "in sub", sub
    assert len(peri.server.bodies) == 1


async def test_without_root_only_the_servers_own_folder(peri: Peri, tmp_path: Path) -> None:
    (peri.workspace / "sub").mkdir()
    async with serving(peri) as client:
        sub = await call(client, "peri", {"prompt": "go", "cwd": str(peri.workspace / "sub")})
        here = await call(client, "peri", {"prompt": "go", "cwd": str(peri.workspace)})
    assert sub.is_error and "without --root a call runs only there" in sub.content[0].text
    assert not here.is_error, here


async def test_a_server_started_in_home_refuses_calls_until_root_is_given(peri: Peri) -> None:
    async with serving(peri, cwd=peri.home) as client:
        result = await call(client, "peri", {"prompt": "go"})
        reply = await call(
            client,
            "peri_reply",
            {"session_id": "0190a0b0-0000-7000-8000-000000000000", "prompt": "x"},
        )
    for refused in (result, reply):
        assert refused.is_error
        assert "without --root" in refused.content[0].text
        assert "restart it with --root DIR" in refused.content[0].text
    assert peri.server.bodies == []


async def test_max_turns_above_the_servers_bound_is_refused(peri: Peri) -> None:
    peri.server.set_script(
        [{"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]} for _ in range(5)]
    )
    async with serving(peri, "--max-turns", "2") as client:
        many = await call(client, "peri", {"prompt": "go", "max_turns": 3})
        bounded = await call(client, "peri", {"prompt": "go"})
    assert many.is_error
    assert "max_turns 3 is more than this server's bound --max-turns 2" in many.content[0].text
    assert bounded.structured_content["num_turns"] == 2, bounded


async def test_peri_reply_to_a_session_outside_the_root_is_refused(
    peri: Peri, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    peri.server.set_script([{"text": "made elsewhere"}])
    other = Peri(server=peri.server, workspace=elsewhere, home=peri.home)
    sid = other.json("-p", "start")["session_id"]
    async with serving(peri, "--root", str(peri.workspace)) as client:
        reply = await call(client, "peri_reply", {"session_id": sid, "prompt": "go on"})
    assert reply.is_error
    assert f"works in {elsewhere}, outside this server's bound --root" in reply.content[0].text
    assert len(peri.server.bodies) == 1
