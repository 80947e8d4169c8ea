"""Provider adapters behind `peri_cli.base.provider.Provider`: the Anthropic and OpenAI SDKs,
a scripted one for tests, and the stream worker process the TUI and `peri -p` read them in.

Importing this package imports nothing (`prestart` runs before the rest of Peri loads); the
helpers the adapters share are in `common`.
"""
