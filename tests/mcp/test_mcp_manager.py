"""The manager with real servers: mcp-server-time (stdio, from PyPI), the in-repo streamable-HTTP
and SSE server, and in-repo servers that crash, hang or speak garbage. No fakes of Peri's code."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from peri_cli.base.messages import TextPart
from peri_cli.base.tool import ANYTHING, ToolContext, ToolError, ToolRegistry
from peri_cli.mcp.config import ServerConfig
from peri_cli.mcp.manager import McpManager
from peri_cli.mcp.plan import Skipped
from peri_cli.mcp.status import Timeouts
from tests.mcp.helpers import (
    SERVERS,
    TIME_SERVER,
    alive,
    env_for,
    pids,
    stdio,
    time_server,
    wait_for,
)


@contextmanager
def running(servers: list[ServerConfig], **kw: Any) -> Iterator[McpManager]:
    manager = McpManager(servers, **kw)
    manager.start()
    try:
        yield manager
    finally:
        manager.close()


async def attached(manager: McpManager, timeout: float = 30) -> ToolRegistry:
    """A registry bound to `manager`, once every server has stopped connecting."""
    registry = ToolRegistry()
    manager.attach(registry)
    for source in registry.sources.values():
        await source.wait(timeout)
    return registry


def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path, session_dir=tmp_path / "session")


async def run(registry: ToolRegistry, name: str, raw: dict[str, Any], tmp_path: Path) -> str:
    tool = registry.get(name)
    assert tool is not None, sorted(registry.deferred)
    output = await tool.call(tool.validate(raw), ctx(tmp_path))
    assert not output.is_error, output
    (part,) = output.content
    assert isinstance(part, TextPart)
    return part.text


def state(manager: McpManager, name: str) -> tuple[str, str]:
    status = manager.status(name)
    assert status is not None
    return status.state, status.detail


async def test_time_server_tools_are_deferred_and_run(tmp_path: Path) -> None:
    with running([time_server()]) as manager:
        registry = await attached(manager)
        assert registry.direct == {} and registry.specs() == []
        assert sorted(registry.deferred) == [
            "mcp__time__convert_time",
            "mcp__time__get_current_time",
        ]
        assert state(manager, "time") == ("connected", "2 tools")
        tool = registry.deferred["mcp__time__get_current_time"]
        assert tool.kind == "external" and tool.writes({}, ctx(tmp_path)) == ANYTHING
        spec = tool.spec()
        assert spec.input_schema["required"] == ["timezone"]
        assert spec.description == "Get current time in a specific timezone"
        text = await run(registry, tool.name, {"timezone": "Europe/Paris"}, tmp_path)
        assert '"timezone": "Europe/Paris"' in text
        with pytest.raises(ToolError, match="timezone: 3 is not of type 'string'"):
            tool.validate({"timezone": 3})
        bad = await tool.call({"timezone": "Nowhere/Atlantis"}, ctx(tmp_path))
        assert bad.is_error  # the server's own isError result
        zones = ["UTC", "Asia/Tokyo", "America/New_York", "Europe/Berlin"]
        texts = await asyncio.gather(
            *(run(registry, tool.name, {"timezone": z}, tmp_path) for z in zones)
        )
        assert all(z in t for z, t in zip(zones, texts, strict=True))  # calls side by side


async def test_streamable_http_server(http_url: str, tmp_path: Path) -> None:
    config = ServerConfig(
        name="web",
        scope="user",
        source=Path("test"),
        transport="http",
        url=http_url,
        headers={"X-Peri-Test": "token-123"},
    )
    with running([config]) as manager:
        registry = await attached(manager)
        assert state(manager, "web") == ("connected", "5 tools, 1 prompt")
        assert await run(registry, "mcp__web__echo", {"text": "hé ✓"}, tmp_path) == "hé ✓"
        assert await run(registry, "mcp__web__add", {"a": 2, "b": 40}, tmp_path) == "42"
        assert await run(registry, "mcp__web__secret_header", {}, tmp_path) == "token-123"
        failed = await registry.deferred["mcp__web__fail"].call({}, ctx(tmp_path))
        assert failed.is_error
        big = await run(registry, "mcp__web__big", {"size": 400_000}, tmp_path)
        assert "the result was cut here" in big
        (side,) = (tmp_path / "session" / "outputs").iterdir()
        assert len(side.read_text()) == 400_000
        (prompt,) = manager.prompts()
        assert (prompt.command, prompt.argument_hint) == ("mcp__web__review", "<path> [focus]")
        assert manager.find_prompt("/mcp__web__review") == prompt
        text = await manager.get_prompt(prompt, {"path": "a.py"})
        assert text.text == "Please review a.py, looking for bugs."
        with pytest.raises(ToolError, match="refused"):
            await manager.get_prompt(prompt, {})


async def test_legacy_sse_server(sse_url: str, tmp_path: Path) -> None:
    config = ServerConfig(name="old", scope="user", source=Path("t"), transport="sse", url=sse_url)
    with running([config]) as manager:
        registry = await attached(manager)
        assert await run(registry, "mcp__old__echo", {"text": "sse"}, tmp_path) == "sse"


async def test_always_load_tools_are_direct_even_when_late(tmp_path: Path) -> None:
    with running([time_server(always_load=True)]) as manager:
        registry = ToolRegistry()
        binding = manager.attach(registry)
        binding.contribution(None)  # the first request, before the server is ready
        assert manager.is_pending("time") and registry.direct == {}
        # once the agent's loop is known, a late server's tools arrive on it by themselves
        for _ in range(1500):
            if registry.direct:
                break
            await asyncio.sleep(0.02)
        assert sorted(registry.direct) == ["mcp__time__convert_time", "mcp__time__get_current_time"]
        assert sorted(s.name for s in registry.specs()) == sorted(registry.direct)
        assert registry.deferred == {}


async def test_a_crash_mid_call_is_reported_and_can_be_reconnected(
    tmp_path: Path, pidfile: Path
) -> None:
    env = env_for(pidfile, ANTHROPIC_API_KEY="sk-ant-secret", OPENAI_API_KEY="sk-oai", HOME="/h")
    config = stdio("crashy", "crash_server.py", env={"OPENAI_API_KEY": "sk-named", "EXTRA": "1"})
    with running([config], env=env) as manager:
        registry = await attached(manager)
        (first,) = pids(pidfile)
        assert os.getpgid(first) == first  # its own process group

        async def getenv(name: str) -> str:
            return await run(registry, "mcp__crashy__getenv", {"name": name}, tmp_path)

        assert await getenv("ANTHROPIC_API_KEY") == "<unset>"  # Peri's keys are never inherited
        assert await getenv("OPENAI_API_KEY") == "sk-named"  # unless the entry names one
        assert (await getenv("EXTRA"), await getenv("HOME")) == ("1", "/h")

        crash = registry.deferred["mcp__crashy__crash"]
        with pytest.raises(ToolError, match="closed the connection during the call"):
            await crash.call({}, ctx(tmp_path))
        assert state(manager, "crashy")[0] == "failed"
        assert "during a call to crash" in state(manager, "crashy")[1]
        registry.sources["crashy"].is_pending()  # a search consults the sources: tools go
        assert registry.deferred == {}
        assert wait_for(lambda: not alive(first))

        assert manager.reconnect("crashy")
        assert registry.sources["crashy"].is_pending()
        await registry.sources["crashy"].wait(30)
        assert state(manager, "crashy") == ("connected", "3 tools")
        assert await run(registry, "mcp__crashy__ping", {}, tmp_path) == "ok"

        # a server that dies while idle is noticed without a call
        second = pids(pidfile)[1]
        os.kill(second, signal.SIGKILL)
        assert wait_for(lambda: state(manager, "crashy")[0] == "failed")
        assert state(manager, "crashy")[1] == "the connection ended (the server exited)"
        with pytest.raises(ToolError, match="is not connected"):
            await registry.get("mcp__crashy__ping").call({}, ctx(tmp_path))  # type: ignore[union-attr]


async def test_servers_that_hang_time_out_and_the_others_go_on(
    tmp_path: Path, pidfile: Path
) -> None:
    servers = [
        stdio("stuck", "hang_server.py", "connect"),  # never answers at all
        stdio("slow", "hang_server.py", "call"),  # connects; its tool never returns
        time_server(),
    ]
    timeouts = Timeouts(connect=3, call=1)
    with running(servers, env=env_for(pidfile), timeouts=timeouts) as manager:
        registry = await attached(manager)
        assert state(manager, "stuck") == ("failed", "no answer within 3 s (timed out)")
        assert not registry.sources["stuck"].is_pending()
        with pytest.raises(ToolError, match=r"did not answer within 1 s; the call was abandoned"):
            await registry.deferred["mcp__slow__wait"].call({}, ctx(tmp_path))
        assert state(manager, "slow")[0] == "connected"
        assert await run(registry, "mcp__time__get_current_time", {"timezone": "UTC"}, tmp_path)
    # "stuck" does not read stdin, so closing the pipe does not end it: its group is killed
    assert len(pids(pidfile)) == 2
    assert not any(alive(p) for p in pids(pidfile))


async def test_garbage_from_a_server(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    with running([stdio("junk", "garbage_server.py")]) as manager:
        registry = await attached(manager)
        with pytest.raises(ToolError, match="answered with a malformed result"):
            await registry.deferred["mcp__junk__bad_shape"].call({}, ctx(tmp_path))
        assert "malformed result" in state(manager, "junk")[1]
        assert await run(registry, "mcp__junk__noise", {}, tmp_path) == "after noise"
        assert wait_for(lambda: "not MCP" in state(manager, "junk")[1])
        # the model reads the description as the server wrote it; what people see is escaped
        assert "\x1b]52" in registry.deferred["mcp__junk__bad_shape"].spec().description
    assert "Traceback" not in capfd.readouterr().err  # the SDK's log never reaches the terminal


async def test_a_server_that_cannot_start(tmp_path: Path) -> None:
    missing = ServerConfig(
        name="gone", scope="user", source=Path("t"), transport="stdio", command="no-such-cmd-x"
    )
    loud = ServerConfig(
        name="loud",
        scope="user",
        source=Path("t"),
        transport="stdio",
        command="sh",
        args=("-c", "printf 'starting\\n\\033[2Jmissing API key\\n' >&2; exit 1"),
    )
    with running([missing, loud], log_dir=tmp_path / "logs") as manager:
        registry = await attached(manager)
        assert state(manager, "gone") == (
            "failed",
            "cannot start: command not found (no-such-cmd-x)",
        )
        st, detail = state(manager, "loud")
        assert st == "failed" and detail.endswith("; stderr: ␛[2Jmissing API key")
        assert registry.deferred == {}
        assert "\x1b" not in manager.status("loud").line()  # type: ignore[union-attr]


async def test_item37_4_a_server_command_never_starts_a_planted_interpreter(
    tmp_path: Path,
) -> None:
    """`sh` first on the server's PATH in the workspace's `.venv/bin` (a sandboxed command may
    have put it there): the real one starts the server."""
    ws, log = tmp_path / "ws", tmp_path / "planted.log"
    venv = ws / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "sh").write_text(f"#!/bin/sh\necho planted >> {log}\n")
    (venv / "sh").chmod(0o755)
    server = ServerConfig(
        name="time",
        scope="project",
        source=ws / ".mcp.json",
        transport="stdio",
        command="sh",
        args=("-c", f'exec "{TIME_SERVER}" --local-timezone UTC'),
        env={"PATH": f"{venv}:{os.environ['PATH']}"},
        cwd=ws,
    )
    with running([server], log_dir=tmp_path / "logs") as manager:
        await attached(manager)
        assert state(manager, "time")[0] == "connected", state(manager, "time")
    assert not log.exists()


async def test_no_server_outlives_close(tmp_path: Path, pidfile: Path) -> None:
    servers = [
        stdio("a", "crash_server.py"),
        stdio("b", "hang_server.py", "call"),
        stdio("c", "hang_server.py", "connect"),
    ]
    manager = McpManager(servers, env=env_for(pidfile), timeouts=Timeouts(connect=20))
    manager.start()
    registry = ToolRegistry()
    manager.attach(registry)
    await registry.sources["a"].wait(30)
    await registry.sources["b"].wait(30)
    assert wait_for(lambda: len(pids(pidfile)) == 3)
    call = asyncio.ensure_future(registry.deferred["mcp__b__wait"].call({}, ctx(tmp_path)))
    await asyncio.sleep(0.2)  # a call in flight, and "c" still connecting
    assert manager.is_pending("c")
    await asyncio.to_thread(manager.close)
    assert not any(alive(p) for p in pids(pidfile))
    with pytest.raises(ToolError, match="was stopped during the call"):
        await call
    assert {s.state for s in manager.statuses()} == {"stopped"}


async def test_skipped_servers_are_listed_and_names_must_not_clash() -> None:
    skipped = Skipped(
        ServerConfig(name="proj", scope="project", source=Path(".mcp.json"), transport="stdio"),
        "not trusted",
    )
    a = ServerConfig(name="a.b", scope="user", source=Path("t"), transport="stdio", command="x")
    b = ServerConfig(name="a_b", scope="user", source=Path("t"), transport="stdio", command="x")
    manager = McpManager([a, b], skipped=[skipped])
    try:
        assert [(s.name, s.state) for s in manager.statuses()] == [
            ("a_b", "failed"),
            ("a.b", "connecting"),
            ("proj", "skipped"),
        ] or sorted((s.name, s.state) for s in manager.statuses()) == [
            ("a.b", "connecting"),
            ("a_b", "failed"),
            ("proj", "skipped"),
        ]
        assert "clashes with 'a.b'" in state(manager, "a_b")[1]
        assert manager.status("proj").to_json()["status"] == "skipped"  # type: ignore[union-attr]
    finally:
        manager.close()


@pytest.mark.parametrize("how", ["exit", "raise", "ctrl-c"])
def test_no_server_outlives_its_host(how: str, pidfile: Path) -> None:
    """The host returns without `close()`, dies of an exception, or gets Ctrl+C (SIGINT)."""
    host = subprocess.Popen(
        [sys.executable, str(SERVERS / "host.py"), "wait" if how == "ctrl-c" else how],
        env=env_for(pidfile, PYTHONPATH=str(Path(__file__).parents[2])),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert host.stdin is not None and host.stdout is not None
    assert host.stdout.readline() == "ready\n"
    assert wait_for(lambda: len(pids(pidfile)) == 2)
    assert all(alive(p) for p in pids(pidfile))
    host.stdin.write("go\n")
    host.stdin.flush()
    if how == "ctrl-c":
        host.send_signal(signal.SIGINT)
    host.wait(30)
    assert not any(alive(p) for p in pids(pidfile))
