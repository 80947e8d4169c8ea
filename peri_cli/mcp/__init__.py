"""MCP servers behind the Tool port, on the official `mcp` SDK (imported only by the manager's
thread, so importing this package stays cheap). Core never imports it; the runtime wires it."""
