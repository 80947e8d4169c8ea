"""The Textual face: `app` composes the widgets with the parts that drive them (`sessions`,
`turns`, `keys`, `agents_ui`, the slash `commands`), which see it through `ports.AppPort`; the
core's events reach the widgets in one `match` (`bridge`). Drawing lives in `widgets/`,
`screens/` and `markdown/`.

It imports Textual, the door and the core rooms for its views; never providers, tools or MCP."""
