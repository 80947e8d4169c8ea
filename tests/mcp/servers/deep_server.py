"""A raw stdio JSON-RPC peer (no SDK) whose `deep` tool's input schema nests DEPTH levels (each
level an object with one property), beside an ordinary `echo` tool; written as text, since the
json module itself refuses to nest that deep."""

from __future__ import annotations

import json
import sys

from _pid import note_pid

DEPTH = 500


def deep_schema(depth: int) -> str:
    level = '{"type": "object", "properties": {"a": '
    return level * depth + '{"type": "string"}' + "}}" * depth


def tools_list(mid: object) -> str:
    echo = {
        "name": "echo",
        "description": "Says its text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    }
    deep = f'{{"name": "deep", "description": "Nested.", "inputSchema": {deep_schema(DEPTH)}}}'
    tools = f"[{json.dumps(echo)}, {deep}]"
    return f'{{"jsonrpc": "2.0", "id": {json.dumps(mid)}, "result": {{"tools": {tools}}}}}'


def send(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def answer(msg: dict) -> None:
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        version = msg.get("params", {}).get("protocolVersion", "2025-06-18")
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "deep", "version": "0"},
        }
        send(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}))
    elif method == "tools/list":
        send(tools_list(mid))
    elif method == "tools/call":
        text = msg["params"].get("arguments", {}).get("text", "")
        result = {"content": [{"type": "text", "text": f"echo: {text}"}]}
        send(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}))
    elif mid is not None:
        error = {"code": -32601, "message": "no such method"}
        send(json.dumps({"jsonrpc": "2.0", "id": mid, "error": error}))


def main() -> None:
    note_pid()
    for raw in sys.stdin:
        if raw.strip():
            answer(json.loads(raw))


if __name__ == "__main__":
    main()
