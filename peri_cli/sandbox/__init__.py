"""The Bash sandbox's adapters: the domain proxy outside the sandbox and its relay inside.

May import the core rooms (permissions for the host matcher) and the standard library."""
