"""URL credentials never reach a message (issue 9 item 6)."""

from __future__ import annotations

import pytest

from peri_cli.base.redact import redact_url, url_secrets

CASES = [
    ("could not reach http://user:s3cret@host:8080/v1", "could not reach http://***@host:8080/v1"),
    ("https://TOKEN123@proxy.example/v1/", "https://***@proxy.example/v1/"),
    (
        "at http://u:p@ss@host/x and https://a:b@c/ too",
        "at http://***@host/x and https://***@c/ too",
    ),
    ("URL('http://u:pw@h')", "URL('http://***@h')"),
    ('<a href="http://u:pw@h/">', '<a href="http://***@h/">'),
    ("mail me at dev@example.com", "mail me at dev@example.com"),
    ("http://host/path?who=a@b", "http://host/path?who=a@b"),
    ("http://host:8080/v1", "http://host:8080/v1"),
    ("no url here", "no url here"),
]


@pytest.mark.parametrize(("text", "shown"), CASES)
def test_item6_url_credentials_are_redacted(text: str, shown: str) -> None:
    assert redact_url(text) == shown


def test_item6_url_secrets_name_the_password_or_a_bare_token() -> None:
    assert url_secrets("http://user:p%40ss@host/") == ["p%40ss", "p@ss"]
    assert url_secrets("https://TOKEN123@host/") == ["TOKEN123"]
    assert url_secrets("http://user:pa/ss@host/v1") == ["pa/ss"]
    assert url_secrets("http://host/v1") == [] and url_secrets(None) == []


def test_item6_redaction_stays_linear_on_hostile_input() -> None:
    """Inputs that make a naive pattern quadratic finish well inside the test timeout."""
    for hostile in ("a." * 200_000 + "@", "http://" + "a" * 200_000 + "@", "x://b@" * 100_000):
        redacted = redact_url(hostile)
        assert "b@" not in redacted.replace("***@", "")
