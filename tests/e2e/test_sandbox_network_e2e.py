"""The sandbox's network end to end: the real `peri -p` against the fake model, bubblewrap and
socat for real, a page served on the host's loopback. Names resolve on the host side: `localhost`
is allowed while `127.0.0.1` is not, and a new domain is denied in headless mode."""

from __future__ import annotations

import shutil

import pytest

from tests.e2e.conftest import Peri
from tests.e2e.test_sandbox_e2e import _PROBLEM, bash, run_calls, sandboxed
from tests.sandbox.pages import PAGE

pytestmark = [
    pytest.mark.skipif(_PROBLEM is not None, reason=f"bwrap cannot run: {_PROBLEM}"),
    pytest.mark.skipif(shutil.which("socat") is None, reason="socat is not installed"),
]


def test_localhost_allowed_goes_through_the_proxy_and_127_0_0_1_is_refused(
    peri: Peri, page_port: int
) -> None:
    sandboxed(peri, network={"allowedDomains": ["localhost"]})
    allowed, refused = run_calls(
        peri,
        [
            bash(f"curl -s --max-time 20 http://localhost:{page_port}/"),
            bash(f"curl -s --max-time 20 http://127.0.0.1:{page_port}/"),
        ],
    )
    assert PAGE.decode().strip() in allowed, allowed
    assert PAGE.decode().strip() not in refused, refused
    assert "sandbox proxy" in refused and "127.0.0.1 is not an allowed domain" in refused, refused


def test_a_new_domain_is_denied_in_headless_mode(peri: Peri, page_port: int) -> None:
    sandboxed(peri)
    (result,) = run_calls(peri, [bash(f"curl -s --max-time 20 http://localhost:{page_port}/")])
    assert PAGE.decode().strip() not in result, result
    assert "localhost is not an allowed domain" in result, result


def test_a_refused_https_connect_is_named_in_the_result(peri: Peri, page_port: int) -> None:
    """curl says only "CONNECT tunnel failed, response 403": the result says what refused it,
    so the model knows to ask for the domain."""
    sandboxed(peri, network={"allowedDomains": ["localhost"]})
    (result,) = run_calls(peri, [bash(f"curl -s --max-time 20 https://127.0.0.1:{page_port}/")])
    assert "[sandbox] network access to 127.0.0.1 refused by the sandbox" in result, result
    assert "ask the user to allow a domain" in result, result
