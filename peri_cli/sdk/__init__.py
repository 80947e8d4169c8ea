"""The public door: `query`, `PeriClient`, `PeriOptions` and typed events (CONTRACT.md §8).

The composition root behind it (`runtime`) fills the agent factory with providers, tools and MCP;
faces (`tui`, `headless`, `acp`) import this door, never the adapters."""
