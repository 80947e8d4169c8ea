"""The operating-system sandbox around Bash commands (an adapter, beside providers, tools and
mcp): bubblewrap's command line (`bwrap`), the macOS Seatbelt profile (`seatbelt`), the
availability check (`probe`), the `CommandSandbox` the runtime gives the tools (`runner`), and
the domain proxy outside the sandbox with its relay inside (`proxy`, `relay` and their parts).

May import the core rooms (the policy is `permissions/sandbox_policy.py`, the host matcher
`permissions/hosts.py`) and the standard library, never a tool or a face; tools reach it only
through the `CommandSandbox` port in `base/tool.py`."""
