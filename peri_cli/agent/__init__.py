"""The agent: the loop, tool rounds, what a failed model call leaves, compaction's runner,
SubAgents, the factory that builds agents, SessionStart, `!` commands, `@` attachments, custom
commands' turns, the workspace's composed configuration and the session host the faces talk to.
It imports every core room below it, never an adapter."""
