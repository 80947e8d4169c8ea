"""Fixtures shared across rooms."""

pytest_plugins = ["tests.sandbox.pages"]  # page_port: a page on the host's loopback
