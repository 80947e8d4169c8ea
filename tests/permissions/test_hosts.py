"""The host matcher: every spelling of an address is one host; names fold case, dots and IDNA."""

from __future__ import annotations

from pathlib import Path

import pytest

from peri_cli.permissions.call_facts import url_domain
from peri_cli.permissions.hosts import canonical_host, host_matches, is_loopback
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.permissions.rule_syntax import RuleSource, parse_rule
from tests.permissions.calls import decide_for

LOOPBACK_SPELLINGS = [
    "127.0.0.1",
    "2130706433",  # one decimal number
    "0x7f000001",  # one hex number
    "0X7F000001",
    "127.1",  # the last part fills the remaining bytes
    "127.0.1",
    "0177.0.0.1",  # octal
    "0x7f.0.0.1",
    "[::ffff:127.0.0.1]",  # IPv4-mapped IPv6
    "::ffff:7f00:1",
    "[::127.0.0.1]",  # IPv4-compatible IPv6
    "127.0.0.1.",  # trailing dot
    "１２７。０。０。１",  # full-width digits and ideographic dots, folded by IDNA
]


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
def test_every_spelling_of_loopback_is_one_host(host: str) -> None:
    assert canonical_host(host) == "127.0.0.1"
    assert host_matches("127.0.0.1", host)
    assert host_matches(host, "127.0.0.1")  # a rule may be written in any spelling too
    assert is_loopback(host)


@pytest.mark.parametrize(
    "host", ["169.254.169.254", "2852039166", "0xa9fea9fe", "169.254.43518", "0251.0376.0251.0376"]
)
def test_the_metadata_address_in_every_spelling(host: str) -> None:
    assert host_matches("169.254.169.254", host)


def test_ipv6_brackets_case_and_zone() -> None:
    assert canonical_host("[::1]") == "::1" and is_loopback("[::1]")
    assert host_matches("[0:0::1]", "::1")
    assert canonical_host("[FE80::1%eth0]") == "fe80::1"
    assert canonical_host("[2001:DB8::1]") == "2001:db8::1"


def test_names_fold_case_trailing_dot_and_idna() -> None:
    assert canonical_host("Example.COM.") == "example.com"
    assert canonical_host("Bücher.example") == "xn--bcher-kva.example"
    assert host_matches("bücher.example", "XN--BCHER-KVA.example.")
    assert is_loopback("LOCALHOST.") and not is_loopback("example.com")


def test_not_addresses_stay_names() -> None:
    # inet_aton refuses these, so a resolver would look them up as names
    for host in ("256.1.1.1", "1.2.3.4.5", "08.1.1.1", "127..1", "4294967296", "0x1g"):
        assert canonical_host(host) == host
        assert not host_matches("127.0.0.1", host)


def test_wildcards_as_webfetch_rules_mean_them() -> None:
    assert host_matches("*.example.com", "docs.example.com")
    assert host_matches("*.example.com", "a.b.EXAMPLE.com.")
    assert not host_matches("*.example.com", "example.com")
    assert not host_matches("*.example.com", "evilexample.com")
    assert not host_matches("*.example.com", "example.com.evil.org")
    assert host_matches("*", "anything.org") and host_matches("*", "2130706433")
    assert host_matches("*.bücher.example", "www.xn--bcher-kva.example")
    assert host_matches("127.*", "2130706433")  # a glob sees the canonical address
    assert host_matches("docs.*", "docs.python.org")


def test_url_domain_is_canonical() -> None:
    assert url_domain("http://2130706433/") == "127.0.0.1"
    assert url_domain("http://[::ffff:127.0.0.1]:8080/x") == "127.0.0.1"
    assert url_domain("https://Example.COM./") == "example.com"


@pytest.mark.parametrize(
    "url",
    [f"http://{h if ':' not in h or h.startswith('[') else f'[{h}]'}/" for h in LOOPBACK_SPELLINGS],
)
def test_a_webfetch_deny_rule_stops_every_spelling(tmp_path: Path, url: str) -> None:
    policy = PermissionPolicy(mode="bypass", workspace=tmp_path, trusted=True, home=tmp_path)
    policy.rules.add(parse_rule("WebFetch(domain:127.0.0.1)", "deny", RuleSource("user")))
    assert decide_for(policy, "WebFetch", {"url": url}).action == "deny"
    assert decide_for(policy, "WebFetch", {"url": "http://127.0.0.2/"}).action == "allow"


def test_a_deny_rule_for_the_metadata_address(tmp_path: Path) -> None:
    policy = PermissionPolicy(mode="bypass", workspace=tmp_path, trusted=True, home=tmp_path)
    policy.rules.add(parse_rule("WebFetch(domain:169.254.169.254)", "deny", RuleSource("user")))
    for url in (
        "http://2852039166/latest/meta-data/",
        "http://0xa9.0xfe.0xa9.0xfe/",
        "http://169.254.43518/",
    ):
        assert decide_for(policy, "WebFetch", {"url": url}).action == "deny"


def test_an_allow_rule_with_a_wildcard(tmp_path: Path) -> None:
    policy = PermissionPolicy(mode="default", workspace=tmp_path, trusted=True, home=tmp_path)
    policy.rules.add(parse_rule("WebFetch(domain:*.example.com)", "allow", RuleSource("user")))
    assert decide_for(policy, "WebFetch", {"url": "https://Docs.Example.com./a"}).action == "allow"
    assert decide_for(policy, "WebFetch", {"url": "https://example.com.evil.org/"}).action == "ask"
