"""The base layer under every room: messages, settings, ids, events, the Provider and Tool ports,
text safety, safe reads and atomic writes, models and their prices.

It imports only the standard library and pydantic (and PyYAML for front matter); nothing of
Peri's."""
