"""The proxy's gate, its questions (SDK callback, events) and the "always" settings edit."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from peri_cli.base.events import PermissionRequested
from peri_cli.sandbox.allowlist import AllowlistError, add_allowed_domain
from peri_cli.sandbox.asking import ask_through_events
from peri_cli.sandbox.gate import Answer, DomainGate
from peri_cli.sdk.netasking import network_ask
from peri_cli.sdk.options import Allow, Deny, PermissionContext


async def test_settings_decide_without_asking_and_deny_wins() -> None:
    asked: list[str] = []

    async def ask(domain: str) -> Answer:
        asked.append(domain)
        return "allow"

    gate = DomainGate(["*.example.com", "localhost"], ["bad.example.com", "127.0.0.1"], ask=ask)
    assert await gate.admit("Docs.Example.COM.")
    assert not await gate.admit("bad.example.com")
    assert not await gate.admit("2130706433")  # the denied address in another spelling
    assert await gate.admit("localhost")
    assert asked == []
    assert await gate.admit("other.org") and await gate.admit("OTHER.org")
    assert asked == ["other.org"]  # asked once, by canonical name


async def test_headless_denies_and_failures_deny() -> None:
    assert not await DomainGate().admit("example.com")

    async def broken(domain: str) -> Answer:
        raise RuntimeError("no")

    async def slow(domain: str) -> Answer:
        await asyncio.sleep(10)
        return "allow"

    assert not await DomainGate(ask=broken).admit("example.com")
    assert not await DomainGate(ask=slow, ask_timeout=0.05).admit("example.com")


async def test_always_remembers_and_a_failed_save_still_allows() -> None:
    kept: list[str] = []

    async def always(domain: str) -> Answer:
        return "always"

    gate = DomainGate(ask=always, remember=kept.append)
    assert await gate.admit("pypi.org") and kept == ["pypi.org"] and "pypi.org" in gate.allowed

    def fail(domain: str) -> None:
        raise AllowlistError("read-only")

    gate = DomainGate(ask=always, remember=fail)
    assert await gate.admit("pypi.org")
    assert gate.notes == ["could not save pypi.org to the allowed domains: read-only"]


def test_add_allowed_domain_keeps_other_keys_and_refuses_bad_files(tmp_path: Path) -> None:
    settings = tmp_path / "home" / "settings.json"
    add_allowed_domain(settings, "pypi.org")
    add_allowed_domain(settings, "pypi.org")
    assert json.loads(settings.read_text()) == {
        "sandbox": {"network": {"allowedDomains": ["pypi.org"]}}
    }
    settings.write_text('{"sandbox": {"network": []}, "model": "m"}')
    with pytest.raises(AllowlistError, match="network is not an object"):
        add_allowed_domain(settings, "x.org")
    settings.write_text("[1, 2")
    with pytest.raises(AllowlistError, match="not valid JSON"):
        add_allowed_domain(settings, "x.org")
    assert settings.read_text() == "[1, 2"  # left as it was


async def test_the_sdk_callback_answers_network_questions() -> None:
    seen: list[tuple[str, dict[str, Any], PermissionContext]] = []

    async def can_use_tool(
        tool: str, data: dict[str, Any], context: PermissionContext
    ) -> Allow | Deny:
        seen.append((tool, data, context))
        return {
            "a.org": Allow(),
            "b.org": Allow(remember="project"),
        }.get(data["domain"], Deny("no"))

    assert network_ask(None, "s") is None  # headless: the gate denies
    ask = network_ask(can_use_tool, "s1")
    assert ask is not None
    assert [await ask(d) for d in ("a.org", "b.org", "c.org")] == ["allow", "always", "deny"]
    tool, data, context = seen[0]
    assert tool == "Network" and data == {"domain": "a.org"} and context.session_id == "s1"


async def test_the_question_as_an_event() -> None:
    events: list[PermissionRequested] = []
    ask = ask_through_events(events.append)
    for answer, expected in (
        ("allow_project", "always"),
        ("allow_session", "allow"),
        ("deny", "deny"),
    ):
        task = asyncio.create_task(ask("pypi.org"))
        await asyncio.sleep(0)
        event = events[-1]
        assert event.tool == "Network" and event.input == {"domain": "pypi.org"}
        event.future.set_result(answer)  # type: ignore[arg-type]
        assert await task == expected
