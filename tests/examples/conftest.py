"""The examples' tests share the SDK tests' fake server fixture."""

from tests.sdk.conftest import server

__all__ = ["server"]
