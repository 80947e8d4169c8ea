"""The operating-system sandbox around Bash commands (an adapter, beside providers, tools and
mcp): bubblewrap's command line (`bwrap`), the macOS Seatbelt profile (`seatbelt`), the
availability check (`probe`) and the `CommandSandbox` the runtime gives the tools (`runner`).

It imports the core rooms (the policy is `permissions/sandbox_policy.py`), never a tool or a
face; tools reach it only through the `CommandSandbox` port in `base/tool.py`."""
