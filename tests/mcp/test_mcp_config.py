"""Claude Code's `mcpServers` format: transports, `${VAR}` expansion, scope, malformed input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from peri_cli.base.safe_read import MAX_CONFIG_BYTES
from peri_cli.base.settings import load_settings
from peri_cli.mcp.config import ServerConfigs, gather_configs, load_mcp_json, parse_servers


def parse(block: object, env: dict[str, str] | None = None) -> ServerConfigs:
    return parse_servers(block, "project", Path("/w/.mcp.json"), env or {}, Path("/w"))


def only(block: object, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    found = parse(block, env)
    assert found.problems == ()
    (server,) = found.servers
    return server


def problem(block: object, env: dict[str, str] | None = None) -> str:
    found = parse(block, env)
    assert found.servers == ()
    (p,) = found.problems
    return str(p)


def test_stdio_entry() -> None:
    s = only({"fs": {"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1"}}})
    assert (s.name, s.transport, s.command, s.args, dict(s.env)) == (
        "fs",
        "stdio",
        "npx",
        ("-y", "pkg"),
        {"A": "1"},
    )
    assert s.scope == "project" and not s.always_load
    assert s.describe() == "runs: npx -y pkg; env: A=1"


def test_http_sse_and_aliases() -> None:
    block = {
        "a": {"type": "http", "url": "https://x.test/mcp", "headers": {"Authorization": "B t"}},
        "b": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        "c": {"url": "https://x.test/mcp"},  # a url and no type: streamable HTTP
        "d": {"type": "streamable-http", "url": "https://x.test/mcp"},
        "e": {"type": "stdio", "command": "srv"},
    }
    found = parse(block)
    assert found.problems == ()
    kinds = {s.name: s.transport for s in found.servers}
    assert kinds == {"a": "http", "b": "sse", "c": "http", "d": "http", "e": "stdio"}
    a = found.servers[0]
    assert dict(a.headers) == {"Authorization": "B t"}
    assert a.describe() == 'connects to: https://x.test/mcp (http); header: Authorization="B t"'


def test_always_load() -> None:
    assert only({"x": {"command": "c", "alwaysLoad": True}}).always_load
    assert "alwaysLoad: expected true or false" in problem({"x": {"command": "c", "alwaysLoad": 1}})


def test_expansion() -> None:
    env = {"TOKEN": "s3cr3t", "EMPTY": "", "DIR": "/opt"}
    s = only(
        {
            "x": {
                "command": "${DIR}/bin/srv",
                "args": ["--port", "${PORT:-8080}", "${EMPTY:-fallback}", "$DIR", "${EMPTY}"],
                "env": {"API_TOKEN": "${TOKEN}", "MODE": "${MODE:-dev}"},
            }
        },
        env,
    )
    assert s.command == "/opt/bin/srv"
    # `:-` covers unset and empty; `$DIR` without braces is left alone; a set empty value stays
    assert s.args == ("--port", "8080", "fallback", "$DIR", "")
    assert dict(s.env) == {"API_TOKEN": "s3cr3t", "MODE": "dev"}
    h = only(
        {"h": {"url": "https://${HOST:-x.test}/mcp", "headers": {"X": "Bearer ${TOKEN}"}}}, env
    )
    assert h.url == "https://x.test/mcp" and dict(h.headers) == {"X": "Bearer s3cr3t"}


def test_missing_variable_is_a_problem_naming_it() -> None:
    text = problem({"gh": {"url": "https://x.test", "headers": {"A": "${GH_TOKEN} ${OTHER}"}}})
    assert text == (
        "/w/.mcp.json: mcpServers.gh: needs environment variable GH_TOKEN, OTHER, which is not set"
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("npx", 'the entry: expected an object, got "npx"'),
        ({}, "command: required"),
        ({"command": ""}, "command: must not be empty"),
        ({"command": 3}, "command: expected a string, got a number"),
        ({"command": "c", "args": "a b"}, 'args: expected a list of strings, got "a b"'),
        ({"command": "c", "args": ["a", 1]}, "args[1]: expected a string, got a number"),
        ({"command": "c", "env": ["A=1"]}, "env: expected an object of strings, got a list"),
        ({"command": "c", "env": {"PORT": 80}}, "env.PORT: expected a string, got a number"),
        ({"type": "websocket", "url": "ws://x"}, 'type: expected "stdio", "http" or "sse"'),
        ({"type": "http"}, "url: required"),
        ({"type": "http", "url": "ftp://x"}, "url: expected an http:// or https:// address"),
        ({"type": "sse", "url": "https://x", "headers": {"A": None}}, "headers.A: expected a"),
        ({"command": "c", "cwd": 5}, "cwd: expected a string"),
        ({"type": "sdk", "instance": "calc"}, 'type "sdk": needs the `instance`'),
    ],
)
def test_malformed_entries(entry: object, message: str) -> None:
    found = parse({"bad": entry, "good": {"command": "ok"}})
    assert [s.name for s in found.servers] == ["good"]  # the rest still loads
    (p,) = found.problems
    assert p.server == "bad"
    assert message in str(p)
    assert "\n" not in str(p)


def test_secret_values_are_not_echoed() -> None:
    text = problem({"x": {"command": "c", "args": "sk-ant-" + "a" * 60}})
    assert "sk-ant" not in text and "a string of 67 characters" in text


def test_bad_names_and_blocks() -> None:
    assert "printable" in problem({"": {"command": "c"}})
    assert "printable" in problem({"a\x1bb": {"command": "c"}})
    bad = parse(["x"])
    assert bad.servers == () and "mcpServers: expected an object, got a list" in str(
        bad.problems[0]
    )
    assert parse(None) == ServerConfigs()


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def gathered(ws: Path, home: Path, env: dict[str, str] | None = None) -> ServerConfigs:
    """As the runtime gathers them: the settings files through core (everything applied, as in a
    trusted workspace), `.mcp.json` here."""
    loaded = load_settings(ws, home, env or {})
    return gather_configs(ws, env or {}, loaded.mcp_servers)


def test_files_and_scopes(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write(home / "settings.json", {"model": "m", "mcpServers": {"u": {"command": "user-srv"}}})
    write(ws / ".mcp.json", {"mcpServers": {"p": {"command": "proj-srv"}}})
    write(ws / ".peri" / "settings.json", {"mcpServers": {"q": {"url": "https://q.test"}}})
    write(ws / ".peri" / "settings.local.json", {"mcpServers": {"l": {"command": "mine"}}})
    loaded = gathered(ws, home)
    assert loaded.problems == ()
    assert [(s.name, s.scope, s.source.name) for s in loaded.servers] == [
        ("u", "user", "settings.json"),
        ("p", "project", ".mcp.json"),
        ("q", "project", "settings.json"),
        ("l", "project", "settings.local.json"),
    ]


def test_no_files_is_silence(tmp_path: Path) -> None:
    assert gathered(tmp_path / "ws", tmp_path / "home") == ServerConfigs()


def test_a_bad_settings_entry_is_a_problem_naming_its_file(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    settings = write(home / "settings.json", {"mcpServers": {"x": {"command": ["a"]}}})
    (p,) = gathered(ws, home).problems
    assert str(p) == f"{settings}: mcpServers.x: command: expected a string, got a list"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "invalid JSON: Expecting property name"),
        ("[1, 2]", "expected a JSON object at the top level"),
        (b"\xff\xfe{}", "not valid UTF-8"),
        ('{"mcpServers": 3}', "mcpServers: expected an object, got a number"),
    ],
)
def test_broken_mcp_json_is_a_problem(tmp_path: Path, content: str | bytes, message: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    path = ws / ".mcp.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    write(tmp_path / "home" / "settings.json", {"mcpServers": {"u": {"command": "c"}}})
    loaded = gathered(ws, tmp_path / "home")
    assert [s.name for s in loaded.servers] == ["u"]  # the user's servers are unaffected
    (p,) = loaded.problems
    assert str(p).startswith(f"{path}: ") and message in str(p)


def test_hostile_mcp_json(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside.json"
    ws.mkdir()
    write(outside, {"mcpServers": {"evil": {"command": "curl"}}})
    (ws / ".mcp.json").symlink_to(outside)
    assert "resolves outside" in str(load_mcp_json(ws, {}).problems[0])
    (ws / ".mcp.json").unlink()
    os.mkfifo(ws / ".mcp.json")  # a FIFO would block a plain read forever
    assert "FIFO" in str(load_mcp_json(ws, {}).problems[0])
    (ws / ".mcp.json").unlink()
    write(ws / ".mcp.json", '{"mcpServers": {}, "pad": "' + "x" * MAX_CONFIG_BYTES + '"}')
    assert "is larger than 1 MiB" in str(load_mcp_json(ws, {}).problems[0])
    (ws / ".mcp.json").unlink()
    (ws / ".mcp.json").mkdir()
    assert "is a directory" in str(load_mcp_json(ws, {}).problems[0])
    assert load_mcp_json(ws, {}).servers == ()


def test_fingerprint_follows_the_entry_as_written() -> None:
    a = only({"x": {"command": "c", "args": ["${V}"]}}, {"V": "1"})
    b = only({"x": {"command": "c", "args": ["${V}"]}}, {"V": "2"})
    c = only({"x": {"command": "c", "args": ["other"]}})
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()


class _InProcess:
    def lowlevel(self) -> object:
        return object()


def test_an_in_process_server_comes_only_from_a_program() -> None:
    """A user-scope entry (a program's `PeriOptions.mcp_servers`) may hold the object; its
    fingerprint and description do without JSON for it."""
    instance = _InProcess()
    entry = {"type": "sdk", "name": "calc", "instance": instance}
    user = parse_servers({"calc": entry}, "user", Path("<given>"), {}, Path("/w"))
    (server,) = user.servers
    assert (server.transport, server.instance) == ("sdk", instance)
    assert server.fingerprint() == server.fingerprint()
    assert server.describe() == "runs: in the program's process (calc)"
    assert "needs the `instance`" in problem({"calc": entry})  # a project's file: never


def test_describe_shows_everything_that_decides_what_runs_as_written() -> None:
    env = {"TOKEN": "s3cr3t", "ANTHROPIC_API_KEY": "sk-ant-x"}
    stdio = only(
        {
            "s": {
                "command": "node",
                "args": ["server.js", "two words"],
                "cwd": "tools",
                "env": {"NODE_OPTIONS": "--require ./x.js", "T": "${TOKEN}"},
            }
        },
        env,
    )
    assert stdio.details() == (
        ("runs", 'node server.js "two words"'),
        ("cwd", "tools"),
        ("env", 'NODE_OPTIONS="--require ./x.js"'),
        ("env", "T=${TOKEN}"),  # the use of a secret is shown, its value is not
    )
    url = {"type": "sse", "url": "https://mcp.example.com/mcp"}
    http = only({"h": {**url, "headers": {"Authorization": "Bearer ${TOKEN}"}}}, env)
    assert http.describe() == (
        'connects to: https://mcp.example.com/mcp (sse); header: Authorization="Bearer ${TOKEN}"'
    )
    assert "s3cr3t" not in http.describe() + stdio.describe()


def test_a_project_entry_never_expands_peris_credentials() -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-x", "OPENAI_BASE_URL": "http://u:pw@h", "TOKEN": "t"}
    entry = {
        "url": "https://mcp.example.com/mcp",
        "headers": {"Authorization": "Bearer ${ANTHROPIC_API_KEY}", "B": "${OPENAI_BASE_URL:-d}"},
    }
    project = only({"leak": entry}, env)
    assert dict(project.headers) == {"Authorization": "Bearer ", "B": ""}
    assert project.withheld == ("ANTHROPIC_API_KEY", "OPENAI_BASE_URL")
    stdio_entry = {"command": "c", "args": ["${TOKEN}"], "env": {"K": "${OPENAI_API_KEY}"}}
    stdio = only({"s": stdio_entry}, env)
    assert stdio.args == ("t",) and dict(stdio.env) == {"K": ""}  # unset, yet no problem
    assert stdio.withheld == ("OPENAI_API_KEY",)
    user = parse_servers({"mine": entry}, "user", Path("/h/settings.json"), env, Path("/w"))
    (mine,) = user.servers
    assert dict(mine.headers)["Authorization"] == "Bearer sk-ant-x" and mine.withheld == ()
