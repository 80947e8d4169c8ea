"""What the model sees: guides, contributions, the Meta Harness, prompts and the frozen snapshot,
token counting, projection of the record, Micro plans, Full's summary request, pressure, the
task list (`todos`) and the working state a Full keeps (`worklog`, `workstate`).

Decisions here are pure; it imports `peri_cli.session` and `peri_cli.base`."""
