"""The editor face: `peri acp`, the Agent Client Protocol (version 1) over stdio (CONTRACT.md §9).

A thin translation between the `acp` SDK's requests and Peri's public door, `peri_cli.sdk`:
it imports the door and the `acp` package, never the core rooms, adapters or the TUI (the
import-linter contract "acp-through-the-door" holds it to that). Where the editor needs
something the door lacks, the door is widened.

- `transport`: JSON-RPC lines on stdin/stdout, malformed ones answered, never fatal.
- `agent`: the `acp.Agent` methods (initialize, sessions, prompt, cancel, mode, model).
- `session`: one editor session over one `PeriClient`; `updates` turns events into updates.
- `asking`: `can_use_tool` as `session/request_permission`; `files`: the client's fs methods
  as the door's file port; `prompt`: content blocks as the prompt text; `server`: the process.
"""
