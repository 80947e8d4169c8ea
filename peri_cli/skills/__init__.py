"""Skills shipped with Peri: the last root, so any user or project skill of the same name wins."""
