"""`peri mcp serve`: Peri as an MCP server for other agents (CONTRACT.md §14), over stdio with the
official `mcp` SDK. A face: it reaches Peri only through the door (`peri_cli.sdk`; the
import-linter contract "mcpserve-through-the-door" holds it to that).

`cli` parses the command line, `bounds` checks each call against the server's flags, `tools`
lists the two tools, `server` serves them, `calls` runs one as a Peri session, `rounds` carries a
run across the rounds of one call (a question ends a round under MCP 2026-07-28) and `asking`
turns its questions into MCP elicitation."""
