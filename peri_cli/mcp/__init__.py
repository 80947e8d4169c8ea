"""MCP servers behind the Tool port, on the official `mcp` SDK (imported only by the manager's
thread, so importing this package stays cheap). The core rooms never import it; the SDK's
runtime wires it."""
