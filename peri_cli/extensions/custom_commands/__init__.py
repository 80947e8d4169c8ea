"""Custom slash commands as Claude Code reads them: `.claude/commands/**/*.md` (project; a
subfolder namespaces the name), `~/.claude/commands/` (user), and later each plugin's `commands/`
(one more `CommandSource`, its prefix the plugin's name: `/name` and `/plugin:name`).

`catalog` holds what a command is and the names that reach it; `discovery` finds them (every
untrusted file skipped with a line naming it); `expansion` turns a body and the typed arguments
into the prompt's text and its `` !`cmd` `` lines. Running those lines is the agent's
(`agent/custom_command.py`): they are Bash calls through the permission path.
"""
