"""What a user or a repository adds: hooks, skills, custom commands, SubAgent types, output
styles, the status line's command and the extra (deferred) tools' registry.

It imports `peri_cli.permissions` (hooks obey trust and rules) and below."""
