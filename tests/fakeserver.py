"""A loopback fake of the Anthropic Messages and OpenAI Chat Completions APIs, streaming included.

Stdlib only, so it runs in-process (`with FakeServer(script=[...]) as srv:`) and as a subprocess for
end-to-end tests of the real `peri` process (`python tests/fakeserver.py --port 0 --script s.json`
prints `LISTENING <port>` and serves until killed).

Endpoints:
  POST /v1/messages           Anthropic Messages (SSE with `event:` lines when "stream": true)
  POST /v1/chat/completions   OpenAI Chat Completions (SSE `data:` chunks, `data: [DONE]`)
  GET  /v1/models             the model list, in the Anthropic shape when the request carries
                              `anthropic-version`, else the OpenAI shape; 404 when the list is
                              None (a server without one). `FakeServer(models=[...])`.
  GET  /_requests             every request received so far, as JSON
  POST /_script               replace the script (a JSON list or {"script": [...]}), reset cursor
  POST /_models               replace the model list (a JSON list, or null for none)
  DELETE /_requests           forget the recorded requests

Each model request first passes validation (rules the real APIs enforce that Peri must respect); an
invalid one is answered 400 with an API-shaped body and consumes no script item. A valid one takes
the next script item. Script items are JSON-friendly dicts; keys combine:

  {"text": "..."}                                 a text reply, streamed word by word
  {"thinking": "...", "signature": "..."}         a thinking block first (OpenAI: reasoning_content)
  {"redacted_thinking": "<data>"}                 an Anthropic redacted_thinking block
  {"tool_calls": [{"name": "Read", "input": {...}}]}        tool calls; ids are generated
  {"tool_calls": [{"name": "Read", "raw_arguments": "{not json"}]}   a model sending nonsense
  {"usage": {"input_tokens": N, "output_tokens": N,
             "cache_read_input_tokens": N, "cache_creation_input_tokens": N}}   Anthropic names;
                                                  mapped to prompt_tokens/cached_tokens for OpenAI
  {"stop_reason": "max_tokens"}                   override (Anthropic names; mapped for OpenAI)
  {"status": 529, "times": 2, "retry_after": 1}   answer that HTTP error N times (default 1), with
                                                  the real body shape and a retry-after header;
                                                  "message" overrides the error text, "code" the
                                                  OpenAI body's `code` (context_length_exceeded)
                                                  and "kind" Anthropic's error type. A 401 echoes
                                                  the key it received, to prove clients scrub it.
  {"cut_after": K}                                send K SSE events, then drop the connection
                                                  without finishing the chunked body
  {"cut_after": K, "graceful": true}              ... or end the body cleanly, still without the
                                                  stop event (what a cutting proxy does)
  {"error_event": "overloaded_error"}             an in-stream error event after `cut_after`
                                                  events (default 1)
  {"delay": 0.05}                                 seconds to sleep before each event
  {"pace": 1.8}                                   spread the events evenly over 1.8 s (event i
                                                  is sent no earlier than i/n of it; what is due
                                                  goes out together, every 2 ms at most): a
                                                  pinned rate whatever the machine's speed
  {"when": "task one", ...}                       only for a request whose first user message
                                                  contains "task one" (concurrent SubAgents each
                                                  take their own items, in order)
  {"invalid_json_at": K}                          a `data:` line of broken JSON before event K
                                                  (the rest of the stream follows); with
                                                  "bad_data": "42" that line holds "42" instead
  {"no_usage": true}                              report no usage at all (OpenAI: no usage chunk
                                                  even when asked; Anthropic: none in
                                                  message_start / message_delta)
  {"quirks": ["no_index", ...]}                   OpenAI only: stream the way real compatible
                                                  servers do (see OPENAI_QUIRKS)

An item with no content key replies "ok"; so does every request once the script is exhausted.

A responder (`set_responder(fn)`, in process) picks the item from the request body instead.

Prompt caching (opt-in: `FakeServer(cache=True)`, `set_cache(True)` or `--cache`): Anthropic
requests then report cache_read/cache_creation tokens computed from the request prefix by
Anthropic's rules (see `cache_usage`). Every accepted request's reported usage is recorded with it.
Events counted by `cut_after` include Anthropic's `ping` and OpenAI's first role chunk.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_ANTHROPIC_MESSAGES = {
    "overloaded_error": "Overloaded",
    "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit",
    "api_error": "Internal server error",
}
_OPENAI_STOP = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "content_filter",
}
_CONTENT_KEYS = ("text", "thinking", "redacted_thinking", "tool_calls")
DEFAULT_MODELS = ["claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101", "gpt-4.1", "fake-model"]
PACE_TICK = 0.002  # seconds: a paced stream writes what is due at most this often
BROKEN_JSON = '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_de'

# How OpenAI-compatible servers (vLLM, llama.cpp, Ollama, LiteLLM, Gemini) bend the stream format.
OPENAI_QUIRKS = {
    "no_index": "tool-call deltas carry no `index`; continuations carry an empty id (Gemini)",
    "index_zero": "every tool call uses index 0, each with its own id (Gemini via proxies)",
    "object_arguments": "each call arrives whole in one chunk, `arguments` a JSON object",
    "split_name": "the tool name is split across two chunks",
    "repeat_name": "the full tool name is repeated on every argument chunk",
    "second_choice": "a second choice (`index: 1`) streams its own text alongside choice 0",
    "duplicate_ids": "every tool call has the id `call_0`, in every reply",
    "no_ids": "tool calls carry no id",
    "finish_stop": 'the reply finishes with "stop" even when it called tools',
}


class _Cut(Exception):
    """Raised inside an SSE writer to drop the connection mid-body."""


def _pieces(text: str) -> list[str]:
    """Word-by-word pieces that join back to `text` exactly."""
    return re.findall(r"\s*\S+\s*|\s+", text) or [text]


def _json_pieces(text: str, n: int = 3) -> list[str]:
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


# --- request validation -------------------------------------------------------------------------


def _count_cache_control(value: Any) -> int:
    if isinstance(value, dict):
        own = 1 if value.get("cache_control") is not None else 0
        return own + sum(_count_cache_control(v) for k, v in value.items() if k != "cache_control")
    if isinstance(value, list):
        return sum(_count_cache_control(v) for v in value)
    return 0


def _check_block(where: str, role: str, block: Any) -> str | None:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return f"{where}: each content block must be an object with a type"
    kind = block["type"]
    allowed = {
        "user": {"text", "image", "tool_result", "document"},
        "assistant": {"text", "thinking", "redacted_thinking", "tool_use"},
    }[role]
    if kind not in allowed:
        return f"{where}: a block of type `{kind}` is not allowed in a `{role}` message"
    if kind == "text" and not (isinstance(block.get("text"), str) and block["text"]):
        return f"{where}: text content blocks must be non-empty"
    if kind == "text" and not block["text"].strip():
        return f"{where}: text content blocks must contain non-whitespace text"
    if kind == "thinking":
        if not isinstance(block.get("thinking"), str):
            return f"{where}.thinking: Field required"
        if not (isinstance(block.get("signature"), str) and block["signature"]):
            return f"{where}.signature: Field required"
    if kind == "redacted_thinking" and not block.get("data"):
        return f"{where}.data: Field required"
    if kind == "tool_use" and not (
        block.get("id") and block.get("name") and isinstance(block.get("input"), dict)
    ):
        return f"{where}: tool_use blocks need id, name and an object input"
    if kind == "tool_result" and not block.get("tool_use_id"):
        return f"{where}.tool_use_id: Field required"
    if kind == "image":
        source = block.get("source")
        if not (isinstance(source, dict) and source.get("type") == "base64" and source.get("data")):
            return f"{where}.source: a base64 source is required"
    return None


def _blocks(message: dict[str, Any]) -> list[Any]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def validate_anthropic(body: Any) -> str | None:  # noqa: C901, PLR0912
    """The error message the real Messages API would give, or None when the request is valid."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    system = body.get("system")
    if isinstance(system, list):
        for i, block in enumerate(system):
            if not (isinstance(block, dict) and block.get("type") == "text" and block.get("text")):
                return f"system.{i}: system blocks must be non-empty text blocks"
    previous_tool_ids: list[str] = []
    seen_tool_ids: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        if i == 0 and role != "user":
            return "messages: first message must use the `user` role"
        if i > 0 and role == messages[i - 1]["role"]:
            return f"messages.{i}: roles must alternate between `user` and `assistant`"
        content = message.get("content")
        if isinstance(content, list) and not content and i < len(messages) - 1:
            return f"messages.{i}: all messages must have non-empty content"
        blocks = _blocks(message)
        for j, block in enumerate(blocks):
            error = _check_block(f"messages.{i}.content.{j}", role, block)
            if error:
                return error
        result_ids = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        if role == "user":
            orphans = [r for r in result_ids if r not in previous_tool_ids]
            if orphans:
                return (
                    f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {', '.join(orphans)}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message."
                )
            missing = [t for t in previous_tool_ids if t not in result_ids]
            if missing:
                return (
                    f"messages.{i - 1}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                    "corresponding `tool_result` block in the next message."
                )
            previous_tool_ids = []
        else:
            previous_tool_ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
            for tool_id in previous_tool_ids:
                if tool_id in seen_tool_ids:
                    return f"messages.{i}: `tool_use` ids must be unique: {tool_id}"
                seen_tool_ids.add(tool_id)
    if previous_tool_ids:
        return (
            f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` "
            f"blocks immediately after: {', '.join(previous_tool_ids)}."
        )
    found = _count_cache_control([system, messages, body.get("tools")])
    if found > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {found}."
    return None


def _check_openai_calls(i: int, calls: list[Any], seen_ids: set[str]) -> str | None:
    """String arguments, and an id on every call that no earlier call in the request used."""
    for call in calls:
        function = call.get("function") or {}
        if not isinstance(function.get("arguments"), str):
            return f"messages[{i}].tool_calls: function.arguments must be a string"
        call_id = call.get("id")
        if not (isinstance(call_id, str) and call_id):
            return f"messages[{i}].tool_calls: each tool call needs an id"
        if call_id in seen_ids:
            return f"messages[{i}].tool_calls: duplicate tool call id {call_id}"
        seen_ids.add(call_id)
    return None


def validate_openai(body: Any) -> str | None:
    """The error message the real Chat Completions API would give, or None when valid."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must contain at least one message"
    pending: list[str] = []
    seen_ids: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return f"Invalid value for 'messages[{i}].role'"
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                return (
                    f"Invalid parameter: messages with role 'tool' must be a response to a "
                    f"preceeding message with 'tool_calls'. (messages[{i}])"
                )
            pending.remove(call_id)
            continue
        if pending:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(pending)}"
            )
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if not calls and not message.get("content"):
                return f"messages[{i}]: an assistant message needs content or tool_calls"
            error = _check_openai_calls(i, calls, seen_ids)
            if error:
                return error
            pending = [call.get("id") for call in calls]
    if pending:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages responding "
            f"to each 'tool_call_id'. The following tool_call_ids did not have response "
            f"messages: {', '.join(pending)}"
        )
    return None


# --- prompt caching (opt-in) --------------------------------------------------------------------
# Anthropic's rules, as documented for prompt caching: the cacheable prefix runs tools -> system ->
# messages, block by block; a `cache_control` breakpoint writes the prefix up to and including its
# block (when it is at least CACHE_MIN_TOKENS long); a request reads the longest prefix written
# before that ends at a block boundary at most CACHE_LOOKBACK blocks before one of its breakpoints.
# Usage then splits the request into cache reads, cache writes (read end .. last breakpoint) and
# uncached input (the rest). Entries never expire here (tests run well inside the 5-minute TTL).
# Tokens are the server's usual measure: JSON characters / 4.

CACHE_MIN_TOKENS = 1024
CACHE_LOOKBACK = 20


def _prefix_blocks(body: dict[str, Any]) -> list[tuple[dict[str, Any], int, bool]]:
    """(block without cache_control, its characters, has a breakpoint) in cache order: tools,
    system, messages. A message's own framing (role, brackets) counts with its first block, so
    the blocks add up to the messages as serialized."""
    out: list[tuple[dict[str, Any], int, bool]] = []

    def add(block: Any) -> None:
        if isinstance(block, dict):
            bare = {k: v for k, v in block.items() if k != "cache_control"}
            out.append((bare, len(json.dumps(bare)), block.get("cache_control") is not None))

    for tool in body.get("tools") or []:
        add(tool)
    system = body.get("system")
    if isinstance(system, str) and system:
        add({"type": "text", "text": system})
    elif isinstance(system, list):
        for block in system:
            add(block)
    for message in body.get("messages") or []:
        role = message.get("role")
        blocks = [b for b in _blocks(message) if isinstance(b, dict)]
        bare = [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]
        sizes = [len(json.dumps(b)) for b in bare]
        if sizes:  # the message's framing counts with its first block, which also names the role
            sizes[0] += len(json.dumps({"role": role, "content": bare})) - sum(sizes)
            bare[0] = {"role": role, **bare[0]}
        for block, size, original in zip(bare, sizes, blocks, strict=True):
            out.append((block, size, original.get("cache_control") is not None))
    return out


class PromptCache:
    """The prefixes written so far (by hash, per model) and the usage a request would report."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self._written: set[str] = set()
        self._lock = threading.Lock()

    def usage(self, body: dict[str, Any]) -> dict[str, int]:
        total = max(1, len(json.dumps(body)) // 4)
        digest = hashlib.sha256(str(body.get("model")).encode())
        ends: list[tuple[str, int]] = []  # (prefix hash, prefix tokens) after each block
        breakpoints: list[int] = []
        chars = 0
        for i, (block, size, marked) in enumerate(_prefix_blocks(body)):
            digest.update(json.dumps(block, sort_keys=True).encode())
            chars += size
            ends.append((digest.copy().hexdigest(), chars // 4))
            if marked:
                breakpoints.append(i)
        with self._lock:
            read = 0
            for b in breakpoints:
                for j in range(b, max(-1, b - CACHE_LOOKBACK), -1):
                    if ends[j][0] in self._written:
                        read = max(read, ends[j][1])
                        break
            written = 0
            for b in breakpoints:
                if ends[b][1] >= CACHE_MIN_TOKENS:
                    self._written.add(ends[b][0])
                    written = max(written, ends[b][1])
        creation = max(0, written - read)
        read, creation = min(read, total), min(creation, total - min(read, total))
        return {
            "input_tokens": total - read - creation,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": creation,
        }


# --- the server ---------------------------------------------------------------------------------


def _first_user_text(body: Any) -> str:
    """The text of a request's first user message, in either wire format."""
    for message in body.get("messages", []) if isinstance(body, dict) else []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(b.get("text", "") for b in content if isinstance(b, dict))
            return ""
    return ""


class _State:
    def __init__(self, script: list[dict[str, Any]] | None, models: list[str] | None) -> None:
        self.lock = threading.Lock()
        self.models = models
        self.script: list[dict[str, Any]] = []
        self.served = 0  # how often the current status item has been answered
        self.requests: list[dict[str, Any]] = []
        self.counter = 0
        self.cache = PromptCache(enabled=False)
        self.responder: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
        self.set_script(script or [])

    def set_script(self, script: list[dict[str, Any]]) -> None:
        with self.lock:
            self.script = [dict(copy.deepcopy(item)) for item in script]
            self.served = 0

    def next_item(self, first_text: str = "") -> dict[str, Any]:
        with self.lock:
            if not self.script:
                return {}
            # An item with "when" is for requests whose first user message contains that text
            # (SubAgents run concurrently: each takes its own items, in order).
            index = next(
                (i for i, it in enumerate(self.script) if it.get("when", "") in first_text),
                None,
            )
            if index is None:
                return {}
            if index:
                return self.script.pop(index)
            item = self.script[0]
            if "status" in item:
                self.served += 1
                if self.served >= int(item.get("times", 1)):
                    self.script.pop(0)
                    self.served = 0
            else:
                self.script.pop(0)
            return item

    def next_id(self) -> int:
        with self.lock:
            self.counter += 1
            return self.counter


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    # -- plumbing --

    def _read_body(self) -> tuple[bytes, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return raw, json.loads(raw) if raw else None
        except ValueError:
            return raw, None

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _record(self, body: Any, status: int, usage: dict[str, Any] | None = None) -> None:
        state = self.server.state
        with state.lock:
            record = {
                "path": self.path,
                "method": self.command,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
                "status": status,
            }
            if usage is not None:
                record["usage"] = dict(usage)
            state.requests.append(record)

    def _stream(self, events: Iterator[bytes], item: dict[str, Any]) -> None:
        """Write SSE events as HTTP/1.1 chunks, honouring delay and cut_after."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.send_header("request-id", f"req_fake_{self.server.state.next_id():06d}")
        self.end_headers()
        self.close_connection = True
        delay = float(item.get("delay", 0))
        cut_after = item.get("cut_after")
        pace = float(item.get("pace", 0))
        if pace:
            events = iter(all_events := list(events))
            step, start = pace / max(1, len(all_events)), time.monotonic()
        sent = 0
        pending: list[bytes] = []  # paced: the events due by now go out in one write

        def send() -> None:
            if pending:
                self.wfile.write(b"".join(pending))
                self.wfile.flush()
                pending.clear()

        try:
            for event in events:
                if cut_after is not None and sent >= int(cut_after):
                    send()
                    if not item.get("graceful"):
                        return  # the socket closes without the final chunk
                    break
                if delay:
                    time.sleep(delay)
                if pace and (ahead := start + sent * step - time.monotonic()) > 0:
                    send()  # (at most every PACE_TICK: a network carries many events a packet)
                    time.sleep(max(ahead, PACE_TICK))
                pending.append(b"%x\r\n%s\r\n" % (len(event), event))
                if not pace:
                    send()
                sent += 1
            send()
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    # -- routes --

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/_requests":
            with self.server.state.lock:
                snapshot = list(self.server.state.requests)
            self._send_json(200, snapshot)
        elif path.endswith("/models"):
            self._models()
        else:
            self._send_json(404, {"error": {"type": "not_found_error", "message": "not found"}})

    def do_DELETE(self) -> None:
        if self.path == "/_requests":
            with self.server.state.lock:
                self.server.state.requests.clear()
            self._send_json(200, {"ok": True})
        else:
            self._send_json(404, {"error": {"type": "not_found_error", "message": "not found"}})

    def do_POST(self) -> None:
        _, body = self._read_body()
        path = self.path.split("?")[0]
        if path == "/_script":
            script = body.get("script") if isinstance(body, dict) else body
            if not isinstance(script, list):
                self._send_json(400, {"error": "the script must be a JSON list"})
                return
            self.server.state.set_script(script)
            self._send_json(200, {"ok": True, "items": len(script)})
        elif path == "/_models":
            if not (body is None or isinstance(body, list)):
                self._send_json(400, {"error": "the models must be a JSON list or null"})
                return
            with self.server.state.lock:
                self.server.state.models = body
            self._send_json(200, {"ok": True})
        elif path.endswith("/messages"):
            self._model_call(body, anthropic=True)
        elif path.endswith("/chat/completions"):
            self._model_call(body, anthropic=False)
        else:
            self._record(body, 404)
            self._send_json(404, {"error": {"type": "not_found_error", "message": "not found"}})

    def _models(self) -> None:
        """The model list in the shape of the API that asked (Anthropic sends its version)."""
        with self.server.state.lock:
            models = self.server.state.models
        anthropic = "anthropic-version" in {k.lower() for k in self.headers}
        self._record(None, 404 if models is None else 200)
        if models is None:
            self._send_error(404, "not found", anthropic=anthropic)
        elif anthropic:
            data = [
                {
                    "type": "model",
                    "id": name,
                    "display_name": name,
                    "created_at": "2025-01-01T00:00:00Z",
                }
                for name in models
            ]
            first, last = (models[0], models[-1]) if models else (None, None)
            page = {"data": data, "has_more": False, "first_id": first, "last_id": last}
            self._send_json(200, page)
        else:
            data = [
                {"id": name, "object": "model", "created": 0, "owned_by": "fake"} for name in models
            ]
            self._send_json(200, {"object": "list", "data": data})

    def _model_call(self, body: Any, *, anthropic: bool) -> None:
        error = validate_anthropic(body) if anthropic else validate_openai(body)
        if error:
            self._record(body, 400)
            self._send_error(400, error, anthropic=anthropic)
            return
        responder = self.server.state.responder
        item = responder(body) if responder is not None else None
        item = self.server.state.next_item(_first_user_text(body)) if item is None else item
        if "status" in item:
            status = int(item["status"])
            self._record(body, status)
            headers = {}
            if item.get("retry_after") is not None:
                headers["retry-after"] = str(item["retry_after"])
            self._send_error(
                status,
                item.get("message"),
                anthropic=anthropic,
                headers=headers,
                kind=item.get("kind"),
                code=item.get("code"),
            )
            return
        reply = _Reply(item, body, self.server.state, cache=anthropic)
        self._record(body, 200, reply.usage)
        if not body.get("stream"):
            self._send_json(200, reply.anthropic_message() if anthropic else reply.openai_message())
        elif anthropic:
            self._stream(reply.anthropic_events(), _stream_options(item))
        else:
            self._stream(reply.openai_events(), _stream_options(item))

    def _send_error(
        self,
        status: int,
        message: str | None,
        *,
        anthropic: bool,
        headers: dict[str, str] | None = None,
        kind: str | None = None,
        code: str | None = None,
    ) -> None:
        key = self.headers.get("x-api-key") or (self.headers.get("authorization") or "")[7:]
        if anthropic:
            fallback = "api_error" if status >= 500 else "invalid_request_error"
            kind = kind or _ANTHROPIC_ERROR_TYPES.get(status, fallback)
            if status == 401:
                message = message or f"invalid x-api-key: {key}"
            body: dict[str, Any] = {
                "type": "error",
                "error": {"type": kind, "message": message or _ANTHROPIC_MESSAGES.get(kind, kind)},
                "request_id": f"req_fake_{self.server.state.next_id():06d}",
            }
        else:
            default_kind, default_code = {
                401: ("invalid_request_error", "invalid_api_key"),
                429: ("requests", "rate_limit_exceeded"),
            }.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
            kind, code = kind or default_kind, code or default_code
            if status == 401:
                message = message or f"Incorrect API key provided: {key}."
            default = "Rate limit reached" if status == 429 else "The server had an error"
            body = {"error": {"message": message or default, "type": kind, "param": None}}
            body["error"]["code"] = code
        self._send_json(status, body, headers)


def _stream_options(item: dict[str, Any]) -> dict[str, Any]:
    """With an error event, `cut_after` places the error instead of cutting the connection."""
    if item.get("error_event"):
        return {k: v for k, v in item.items() if k != "cut_after"}
    return item


class _Reply:
    """One scripted reply rendered in either protocol."""

    def __init__(
        self, item: dict[str, Any], request: dict[str, Any], state: _State, *, cache: bool = False
    ) -> None:
        self.item = item
        self.request = request
        self.state = state
        self.model = str(request.get("model", "fake-model"))
        self.text = item.get("text")
        if self.text is None and not any(k in item for k in _CONTENT_KEYS):
            self.text = "ok"
        self.calls = []
        for call in item.get("tool_calls") or []:
            arguments = call.get("raw_arguments")
            if arguments is None:
                arguments = json.dumps(call.get("input") or {})
            self.calls.append((str(call["name"]), arguments, state.next_id()))
        default_stop = "tool_use" if self.calls else "end_turn"
        self.stop_reason = str(item.get("stop_reason", default_stop))
        words = len((self.text or "").split()) + len((item.get("thinking") or "").split())
        usage = {
            "input_tokens": max(1, len(json.dumps(request)) // 4),
            "output_tokens": max(1, words + 10 * len(self.calls)),
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        }
        if cache and state.cache.enabled:
            usage.update(state.cache.usage(request))
        usage.update(item.get("usage") or {})
        self.usage = usage

    # -- Anthropic --

    def _anthropic_blocks(self) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if self.item.get("thinking") is not None:
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": self.item["thinking"],
                    "signature": self.item.get("signature", "sig-fake"),
                }
            )
        if self.item.get("redacted_thinking") is not None:
            blocks.append({"type": "redacted_thinking", "data": self.item["redacted_thinking"]})
        if self.text is not None:
            blocks.append({"type": "text", "text": self.text})
        for name, arguments, n in self.calls:
            try:
                parsed = json.loads(arguments)
            except ValueError:
                parsed = {}
            block_id = f"toolu_fake_{n:04d}"
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block_id,
                    "name": name,
                    "input": parsed,
                    "_arguments": arguments,
                }
            )
        return blocks

    def anthropic_message(self) -> dict[str, Any]:
        content = [
            {k: v for k, v in b.items() if k != "_arguments"} for b in self._anthropic_blocks()
        ]
        return {
            "id": f"msg_fake_{self.state.next_id():06d}",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": self.stop_reason,
            "stop_sequence": None,
            "usage": self.usage,
        }

    def anthropic_events(self) -> Iterator[bytes]:
        def sse(kind: str, data: dict[str, Any]) -> bytes:
            return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()

        start = self.anthropic_message()
        start.update(content=[], stop_reason=None)
        start["usage"] = {**self.usage, "output_tokens": 1}
        if self.item.get("no_usage"):
            del start["usage"]
        events = [sse("message_start", {"type": "message_start", "message": start})]
        events.append(sse("ping", {"type": "ping"}))
        for index, block in enumerate(self._anthropic_blocks()):
            kind = block["type"]
            opening: dict[str, Any]
            deltas: list[dict[str, Any]] = []
            if kind == "thinking":
                opening = {"type": "thinking", "thinking": "", "signature": ""}
                deltas = [
                    {"type": "thinking_delta", "thinking": p} for p in _pieces(block["thinking"])
                ]
                deltas.append({"type": "signature_delta", "signature": block["signature"]})
            elif kind == "text":
                opening = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"])]
            elif kind == "tool_use":
                opening = {
                    "type": "tool_use",
                    "id": block["id"],
                    "name": block["name"],
                    "input": {},
                }
                deltas = [
                    {"type": "input_json_delta", "partial_json": p}
                    for p in _json_pieces(block["_arguments"])
                ]
            else:
                opening = block
            events.append(
                sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": opening},
                )
            )
            for delta in deltas:
                data = {"type": "content_block_delta", "index": index, "delta": delta}
                events.append(sse("content_block_delta", data))
            events.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        closing: dict[str, Any] = {
            "type": "message_delta",
            "delta": {"stop_reason": self.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": self.usage["output_tokens"]},
        }
        if self.item.get("no_usage"):
            del closing["usage"]
        events.append(sse("message_delta", closing))
        events.append(sse("message_stop", {"type": "message_stop"}))
        if self.item.get("error_event"):
            kind = str(self.item["error_event"])
            error = {"type": kind, "message": _ANTHROPIC_MESSAGES.get(kind, kind)}
            at = int(self.item.get("cut_after", 1))
            events = [*events[:at], sse("error", {"type": "error", "error": error})]
        if self.item.get("invalid_json_at") is not None:
            at = int(self.item["invalid_json_at"])
            bad = self.item.get("bad_data", BROKEN_JSON)
            events.insert(at, f"event: content_block_delta\ndata: {bad}\n\n".encode())
        yield from events

    # -- OpenAI --

    def _openai_usage(self) -> dict[str, Any]:
        cached = int(self.usage["cache_read_input_tokens"])
        prompt = (
            int(self.usage["input_tokens"])
            + cached
            + int(self.usage["cache_creation_input_tokens"])
        )
        completion = int(self.usage["output_tokens"])
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        }

    def _openai_calls(self) -> list[dict[str, Any]]:
        quirks = set(self.item.get("quirks") or [])
        calls = []
        for name, arguments, n in self.calls:
            call: dict[str, Any] = {
                "id": "call_0" if "duplicate_ids" in quirks else f"call_fake_{n:04d}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
            if "no_ids" in quirks:
                del call["id"]
            calls.append(call)
        return calls

    def openai_message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.calls:
            message["tool_calls"] = self._openai_calls()
        if self.item.get("thinking") is not None:
            message["reasoning_content"] = self.item["thinking"]
        return {
            "id": f"chatcmpl-fake-{self.state.next_id()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": _OPENAI_STOP.get(self.stop_reason, "stop"),
                }
            ],
            "usage": self._openai_usage(),
        }

    def openai_events(self) -> Iterator[bytes]:
        ident = f"chatcmpl-fake-{self.state.next_id()}"
        created = int(time.time())
        quirks = set(self.item.get("quirks") or [])
        unknown = quirks - set(OPENAI_QUIRKS)
        if unknown:
            raise ValueError(f"unknown quirks: {sorted(unknown)}")

        def choice(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> Any:
            return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}

        def chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> bytes:
            choices = [] if delta is None else [choice(delta, finish)]
            if delta is not None and "second_choice" in quirks and ("content" in delta or finish):
                choices.append(choice({"content": "SECOND "} if not finish else {}, finish, 1))
            return raw({"choices": choices, **extra})

        def raw(fields: dict[str, Any]) -> bytes:
            data = {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": self.model,
                **fields,
            }
            return f"data: {json.dumps(data)}\n\n".encode()

        events = [chunk({"role": "assistant", "content": ""})]
        for piece in _pieces(self.item.get("thinking") or "") if self.item.get("thinking") else []:
            events.append(chunk({"reasoning_content": piece}))
        if "second_choice" in quirks:  # a chunk that holds only the second choice
            events.append(raw({"choices": [choice({"content": "ONLY-SECOND "}, None, 1)]}))
        for piece in _pieces(self.text) if self.text else []:
            events.append(chunk({"content": piece}))
        for index, call in enumerate(self._openai_calls()):
            events.extend(chunk({"tool_calls": [d]}) for d in _call_deltas(call, index, quirks))
        stop = "end_turn" if "finish_stop" in quirks else self.stop_reason
        events.append(chunk({}, _OPENAI_STOP.get(stop, "stop")))
        asked = (self.request.get("stream_options") or {}).get("include_usage")
        if asked and not self.item.get("no_usage"):
            events.append(chunk(None, usage=self._openai_usage()))
        events.append(b"data: [DONE]\n\n")
        if self.item.get("error_event"):
            error = {"message": str(self.item["error_event"]), "type": "server_error"}
            at = int(self.item.get("cut_after", 1))
            events = [*events[:at], f"data: {json.dumps({'error': error})}\n\n".encode()]
        if self.item.get("invalid_json_at") is not None:
            at = int(self.item["invalid_json_at"])
            bad = self.item.get("bad_data", BROKEN_JSON)
            events.insert(at, f"data: {bad}\n\n".encode())
        yield from events


def _call_deltas(call: dict[str, Any], index: int, quirks: set[str]) -> list[dict[str, Any]]:
    """The tool-call deltas of one call, as a server with `quirks` streams them."""
    name = call["function"]["name"]
    arguments = call["function"]["arguments"]

    def delta(**fields: Any) -> dict[str, Any]:
        if "no_index" not in quirks:
            fields["index"] = 0 if "index_zero" in quirks else index
        return fields

    head = {k: v for k, v in call.items() if k != "function"}
    if "object_arguments" in quirks:
        try:
            value: Any = json.loads(arguments)
        except ValueError:
            value = arguments
        return [delta(**head, function={"name": name, "arguments": value})]
    first = name[: len(name) // 2] if "split_name" in quirks and len(name) > 1 else name
    out = [delta(**head, function={"name": first, "arguments": ""})]
    if first != name:
        out.append(delta(function={"name": name[len(first) :]}))
    for piece in _json_pieces(arguments):
        function = {"arguments": piece}
        if "repeat_name" in quirks:
            function = {"name": name, **function}
        empty = {"id": "", "type": ""} if "no_index" in quirks else {}
        out.append(delta(**empty, function=function))
    return out


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], state: _State) -> None:
        super().__init__(address, _Handler)
        self.state = state


class FakeServer:
    """The fake API on a loopback port, served from a background thread.

    `url` is the root (the Anthropic SDK's base_url); `openai_url` adds `/v1` (the OpenAI SDK's).
    """

    def __init__(
        self,
        script: list[dict[str, Any]] | None = None,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        models: list[str] | None = DEFAULT_MODELS,
        cache: bool = False,
    ) -> None:
        self._state = _State(script, None if models is None else list(models))
        self._state.cache.enabled = cache
        self._server = _HTTPServer((host, port), self._state)
        self._thread: threading.Thread | None = None
        self.host = host

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request received: {"path", "method", "headers", "body", "status"}."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of the model calls that passed validation."""
        return [r["body"] for r in self.requests if r["status"] != 400]

    def set_script(self, script: list[dict[str, Any]]) -> None:
        self._state.set_script(script)

    def set_models(self, models: list[str] | None) -> None:
        """What `GET /v1/models` answers; None makes it a 404 (a server with no list)."""
        with self._state.lock:
            self._state.models = None if models is None else list(models)

    def set_responder(
        self, responder: Callable[[dict[str, Any]], dict[str, Any] | None] | None
    ) -> None:
        """In process only: a function from a valid request body to its script item, asked before
        the script (None falls through to it); for replies that depend on the request."""
        self._state.responder = responder

    def set_cache(self, enabled: bool) -> None:
        """Turn Anthropic prompt-cache accounting on or off (off forgets what was cached)."""
        self._state.cache = PromptCache(enabled=enabled)

    def start(self) -> FakeServer:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def serve_forever(self) -> None:
        self._server.serve_forever(poll_interval=0.02)  # a short poll keeps stop() fast

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake Anthropic/OpenAI streaming API on loopback")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--script", type=Path, help="a JSON file holding a list of script items")
    parser.add_argument(
        "--models", help="comma-separated model list for GET /v1/models; 'none' for a 404"
    )
    parser.add_argument(
        "--cache", action="store_true", help="report Anthropic prompt-cache usage from prefixes"
    )
    args = parser.parse_args(argv)
    script = json.loads(args.script.read_text()) if args.script else []
    models = DEFAULT_MODELS
    if args.models is not None:
        models = None if args.models == "none" else [m for m in args.models.split(",") if m]
    server = FakeServer(script, port=args.port, host=args.host, models=models, cache=args.cache)
    print(f"LISTENING {server.port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._server.server_close()
    sys.exit(0)


if __name__ == "__main__":
    main()
