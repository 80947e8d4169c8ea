"""The proxy's gate, its questions (SDK callback, events) and the "always" settings edit."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from peri_cli.base.events import PermissionRequested
from peri_cli.sandbox.allowlist import AllowlistError, add_allowed_domain, keep_domain
from peri_cli.sandbox.asking import ask_through_events
from peri_cli.sandbox.gate import Always, Answer, DomainGate, Scope
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

    gate = DomainGate(ask=always, remember=lambda d, scope: kept.append((d, scope)))
    assert await gate.admit("pypi.org") and "pypi.org" in gate.allowed
    assert kept == [("pypi.org", "local")]

    def fail(domain: str, scope: Scope) -> None:
        raise AllowlistError("read-only")

    heard: list[str] = []
    gate = DomainGate(ask=always, remember=fail, on_note=heard.append)
    assert await gate.admit("pypi.org")
    assert gate.notes == ["could not save pypi.org to the allowed domains: read-only"]
    assert heard == gate.notes  # told as it happens, not only kept


async def test_always_keeps_the_domain_in_the_scope_answered() -> None:
    kept: list[tuple[str, Scope]] = []
    scopes: dict[str, Answer] = {"a.org": Always("user"), "b.org": Always("project")}

    async def ask(domain: str) -> Answer:
        return scopes[domain]

    gate = DomainGate(ask=ask, remember=lambda d, scope: kept.append((d, scope)))
    assert await gate.admit("a.org") and await gate.admit("b.org")
    assert kept == [("a.org", "user"), ("b.org", "project")]


async def test_untrusted_names_are_refused_without_asking() -> None:
    asked: list[str] = []

    async def ask(domain: str) -> Answer:
        asked.append(domain)
        return "allow"

    gate = DomainGate(ask=ask)
    for host in ("ex\x1bample.com", "a" * 300, "*.example.com", "a b.com", "", "a..b"):
        assert not await gate.admit(host), host
    assert asked == []
    assert all(r.why == "not a host name" for r in gate.refusals)
    assert all(r.host.isprintable() and len(r.host) <= 60 for r in gate.refusals)


async def test_refusals_say_why_and_since_when() -> None:
    async def deny(domain: str) -> Answer:
        return "deny"

    gate = DomainGate(denied=["bad.org"], ask=deny)
    assert not await gate.admit("bad.org")
    mark = gate.mark()
    assert not await gate.admit("other.org") and not await gate.admit("OTHER.org")
    assert [(r.host, r.why) for r in gate.refused_since(mark)] == [
        ("other.org", "not allowed by the user")
    ]
    assert "settings" in gate.refused_since(0)[0].why
    headless = DomainGate()
    assert not await headless.admit("x.org")
    assert "no one can be asked" in headless.refusals[-1].why


async def test_new_settings_lists_keep_the_sessions_answers() -> None:
    async def allow(domain: str) -> Answer:
        return "allow"

    gate = DomainGate(["a.org"], ask=allow)
    assert await gate.admit("b.org")
    gate.set_lists(["c.org"], ["a.org"])
    assert gate.decided("b.org") is True and gate.decided("c.org") is True
    assert gate.decided("a.org") is False


def test_keep_domain_writes_the_chosen_layer(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / ".peri").mkdir()
    (ws / ".peri" / "settings.json").write_text('{"model": "m", "sandbox": {"enabled": true}}')
    assert keep_domain("local", ws, home, "A.org") == ws / ".peri" / "settings.local.json"
    assert keep_domain("project", ws, home, "b.org") == ws / ".peri" / "settings.json"
    assert keep_domain("user", ws, home, "0x7f000001") == home / "settings.json"
    assert json.loads((ws / ".peri" / "settings.json").read_text()) == {
        "model": "m",
        "sandbox": {"enabled": True, "network": {"allowedDomains": ["b.org"]}},
    }
    local = json.loads((ws / ".peri" / "settings.local.json").read_text())
    assert local["sandbox"]["network"]["allowedDomains"] == ["a.org"]  # canonical
    user = json.loads((home / "settings.json").read_text())
    assert user["sandbox"]["network"]["allowedDomains"] == ["127.0.0.1"]
    with pytest.raises(AllowlistError, match="not a host name"):
        keep_domain("local", ws, home, "evil\n.org")


def test_keep_domain_refuses_a_linked_peri_folder(tmp_path: Path) -> None:
    ws, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    ws.mkdir()
    elsewhere.mkdir()
    (ws / ".peri").symlink_to(elsewhere)
    with pytest.raises(AllowlistError, match="not a plain folder"):
        keep_domain("local", ws, tmp_path / "home", "a.org")
    assert list(elsewhere.iterdir()) == []


def test_concurrent_always_answers_all_land(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    names = [f"host{i}.org" for i in range(24)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: keep_domain("local", ws, tmp_path / "h", n), names))
    local = json.loads((ws / ".peri" / "settings.local.json").read_text())
    assert sorted(local["sandbox"]["network"]["allowedDomains"]) == sorted(names)


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
            "d.org": Allow(remember="project", keep_in="user"),
            "e.org": Allow(remember="session"),
        }.get(data["domain"], Deny("no"))

    assert network_ask(None, "s") is None  # headless: the gate denies
    ask = network_ask(can_use_tool, "s1")
    assert ask is not None
    answers = [await ask(d) for d in ("a.org", "b.org", "c.org", "d.org", "e.org")]
    assert answers == ["allow", Always("local"), "deny", Always("user"), "allow"]
    tool, data, context = seen[0]
    assert tool == "Network" and data == {"domain": "a.org"} and context.session_id == "s1"


async def test_the_question_as_an_event() -> None:
    events: list[PermissionRequested] = []
    ask = ask_through_events(events.append)
    for answer, keep_in, expected in (
        ("allow_project", "", "always"),
        ("allow_project", "user", Always("user")),
        ("allow_project", "project", Always("project")),
        ("allow_project", "../elsewhere", "always"),  # not a layer: the default one
        ("allow_session", "user", "allow"),
        ("deny", "user", "deny"),
    ):
        task = asyncio.create_task(ask("pypi.org"))
        await asyncio.sleep(0)
        event = events[-1]
        assert event.tool == "Network" and event.input == {"domain": "pypi.org"}
        event.keep_in = keep_in
        event.future.set_result(answer)  # type: ignore[arg-type]
        assert await task == expected
