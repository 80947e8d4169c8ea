"""Compaction's runner: the Compact phase before every model call (`compactor`), which measures
pressure (`gauge`), plans and commits Micro steps (`micro`) and runs Full (`full`, with the
working state it keeps: `keep`). It acts on
the agent through the `port` it declares; the pure planning and rendering live in `context/`."""
