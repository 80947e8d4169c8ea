"""What the model sees: guides, contributions, the Meta Harness, prompts and the frozen snapshot,
token counting, projection of the record, Micro plans, Full's summary request, pressure.

Decisions here are pure; it imports `peri_cli.session` and `peri_cli.base`."""
