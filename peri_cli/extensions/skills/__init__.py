"""Skills: `<root>/<name>/SKILL.md` files found at start, listed by name and description in the
frozen prompt, and loaded whole only when the model or the user asks for one.

`catalog` holds what a skill is; `discovery` finds them (with `reading` and `fields` for each
untrusted file); `listing` writes the frozen prompt's section; `invocation` turns `/<name> args`
and the Skill tool's call into the message the model reads.
"""
