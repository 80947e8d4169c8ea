"""Who may do what: rule syntax and sources, matching (shell-aware for Bash), modes, the policy
that asks, and workspace trust.

It imports `peri_cli.context` (trust reads what guides and Meta would load) and below."""
