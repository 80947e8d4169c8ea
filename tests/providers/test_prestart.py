"""The stream worker `peri -p` starts first thing (`prestart`): the run's provider takes it and
gets every delta as the server sent it; a worker for a provider the settings overruled, or one
nobody asked for anything, is ended rather than left loading an SDK."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from peri_cli.base.messages import user_text
from peri_cli.base.provider import ModelRequest, TextDelta
from peri_cli.providers import prestart
from peri_cli.providers.anthropic.provider import AnthropicProvider
from peri_cli.providers.openai.provider import OpenAIProvider
from peri_cli.providers.procstream import ProcessProvider, stream_provider
from tests.fakeserver import FakeServer
from tests.providers.streams import collect

REQ = ModelRequest(model="m", frozen_system="s", dynamic_system="", messages=[user_text("go")])


@pytest.fixture(autouse=True)
def nothing_left_waiting() -> Iterator[None]:
    yield
    prestart.discard(done=True)


def ended(proc: object) -> bool:
    assert proc is not None
    return proc.wait(timeout=10) is not None  # type: ignore[attr-defined]


async def test_the_run_takes_the_waiting_worker_and_gets_every_delta_as_sent(
    server: FakeServer,
) -> None:
    reply = " ".join(f"w{i}" for i in range(3000))
    server.set_script([{"text": reply}] * 2)
    waiting = prestart.start("anthropic")
    assert prestart.start("anthropic") is waiting  # once per process
    provider = stream_provider("anthropic", api_key="k", base_url=server.url, interactive=False)
    try:
        assert isinstance(provider, ProcessProvider)
        assert provider._proc is None  # not yet asked: the waiting one is used on first ask
        deltas, done = await collect(provider, REQ)
        assert provider._proc is waiting
    finally:
        provider.close()
    inline, _ = await collect(AnthropicProvider(api_key="k", base_url=server.url), REQ)
    assert done.message.text == reply
    assert [e.text for e in deltas if isinstance(e, TextDelta)] == [
        e.text for e in inline if isinstance(e, TextDelta)
    ]  # unbatched: the same deltas, one by one (3,000 of them)
    assert len(deltas) > 1000
    assert ended(waiting)


async def test_a_worker_for_a_provider_the_settings_overruled_is_ended(
    server: FakeServer,
) -> None:
    server.set_script([{"text": "through openai"}])
    guessed = prestart.start("anthropic")
    provider = stream_provider("openai", api_key="k", base_url=server.openai_url, interactive=False)
    assert isinstance(provider, OpenAIProvider)  # in this process: nothing was waiting for it
    assert ended(guessed)
    _, done = await collect(provider, REQ)
    assert done.message.text == "through openai"


def test_without_a_waiting_worker_the_sdk_runs_in_process_and_the_tui_gets_batches() -> None:
    headless = stream_provider("anthropic", api_key="k", base_url=None, interactive=False)
    assert isinstance(headless, AnthropicProvider)
    tui = stream_provider("anthropic", api_key="k", base_url=None, interactive=True)
    assert isinstance(tui, ProcessProvider) and tui.batched
    tui.close()


def test_a_face_that_prestarted_gives_its_later_sessions_workers_of_their_own() -> None:
    """ACP's second session, `mcp serve`'s second call: a worker of its own, unbatched, not the
    SDK imported on the event loop the sessions share; once the face is done, in process again."""
    prestart.start("anthropic")
    first = stream_provider("anthropic", api_key="k", base_url=None, interactive=False)
    second = stream_provider("anthropic", api_key="k", base_url=None, interactive=False)
    assert isinstance(second, ProcessProvider) and not second.batched
    for provider in (first, second):
        provider.close()  # type: ignore[attr-defined]
    prestart.discard(done=True)
    later = stream_provider("anthropic", api_key="k", base_url=None, interactive=False)
    assert isinstance(later, AnthropicProvider)


def test_a_waiting_worker_nobody_asked_ends_with_its_run() -> None:
    taken = prestart.start("anthropic")
    provider = stream_provider("anthropic", api_key="k", base_url=None, interactive=False)
    provider.close()  # type: ignore[attr-defined]
    assert ended(taken)
    left = prestart.start("openai")
    prestart.discard()  # the run failed before its provider was built
    assert ended(left)


async def test_a_waiting_worker_that_died_while_loading_is_replaced(server: FakeServer) -> None:
    server.set_script([{"text": "from a fresh worker"}])
    dead = prestart.start("anthropic")
    assert dead is not None
    dead.kill()  # killed while it loads (out of memory, a stray kill)
    dead.wait()
    provider = stream_provider("anthropic", api_key="k", base_url=server.url, interactive=False)
    try:
        _, done = await asyncio.wait_for(collect(provider, REQ), 60)
        assert done.message.text == "from a fresh worker"
        assert len(server.requests) == 1  # no retry: the dead one was never asked
    finally:
        provider.close()


def test_closing_a_provider_whose_worker_died_raises_nothing() -> None:
    dead = prestart.start("anthropic")
    provider = stream_provider("anthropic", api_key="k", base_url=None, interactive=False)
    assert isinstance(provider, ProcessProvider) and dead is not None
    provider._worker()  # the configuration is written to it
    dead.kill()
    dead.wait()
    provider._write(dead, {"op": "stream", "id": 1, "request": {}})  # unflushed, to a dead pipe
    provider.close()


async def test_the_worker_never_imports_the_workspace_s_modules(
    server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository's `anthropic.py` (or `peri_cli/`) is not run by the process that is handed
    the API key: the worker's import path does not start with the current directory."""
    marker = tmp_path / "ran"
    for planted in ("anthropic.py", "httpx2.py", "peri_cli/__init__.py"):
        (tmp_path / planted).parent.mkdir(exist_ok=True)
        (tmp_path / planted).write_text(f"open({str(marker)!r}, 'a').write('{planted}')\n")
    monkeypatch.chdir(tmp_path)
    server.set_script([{"text": "the real SDK"}] * 2)
    prestart.start("anthropic")
    early = stream_provider("anthropic", api_key="k", base_url=server.url, interactive=False)
    tui = ProcessProvider("anthropic", api_key="k", base_url=server.url)
    try:
        for provider in (early, tui):
            _, done = await asyncio.wait_for(collect(provider, REQ), 60)
            assert done.message.text == "the real SDK"
    finally:
        early.close()  # type: ignore[attr-defined]
        tui.close()
    assert not marker.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_prestarted_worker_ends_with_the_process_that_started_it(tmp_path: Path) -> None:
    """Killed with its parent, not ~2 s later when it has loaded the SDK and reads its input."""
    script = (
        "import os, sys\n"
        "from peri_cli.providers import prestart\n"
        "print(prestart.start('anthropic').pid, flush=True)\n"
        "os._exit(0)\n"
    )
    parent = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    worker = int(parent.stdout)
    deadline = time.monotonic() + 0.5  # loading the SDK alone takes ~2 s here
    while running(worker) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not running(worker)


def running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")
