"""Peri: a terminal coding agent with careful context engineering."""

__version__ = "0.1.0"
