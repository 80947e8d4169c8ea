"""The Textual face: composes widgets and routes the core's events in one `match` (bridge).

It imports Textual, the door and the core rooms for its views; never providers, tools or MCP."""
