"""The Anthropic Messages API behind the Provider port, on the official `anthropic` SDK.

`provider` holds the client, its errors and the model list; `request` builds the body, with the
cache layout; `stream` turns the SDK's events into Peri's stream events and the final message.
"""
