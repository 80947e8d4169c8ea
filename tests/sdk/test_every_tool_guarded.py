"""Every tool a session registers, present and future, is held to the Read and Edit deny rules
and to the hidden paths, without anyone naming it here.

The session is the real runtime (built-in tools, SubAgents, WebFetch, the extra-tool wrappers and
a real MCP server's tools); each tool is called through the real loop and permission policy, in
`bypass` mode so that nothing but the rules and the hidden paths stands in the way, a deferred
tool through ExecuteExtraTool. Its inputs are made from its own schema: a base input (every
required string "secret") and that base with one field at a time set to each candidate value
(the secret file, a word in it, a wildcard, the planted key, its folder). A call "touches" the
secret when its result shows the file's content or names the file, or the file changed.

1. Without rules, no call hands over the planted `~/.ssh` key (it asks; headless-like, the test
   denies), and the calls that touch `secret` are found (Read, Grep, Glob, Write and Edit among
   them, or the generator is broken).
2. With `Read(./secret)` and `Edit(./secret)` deny rules, each of those calls touches it no more.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from peri_cli.base.events import PermissionRequested, ToolFinished
from peri_cli.base.tool import Tool
from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
from peri_cli.sdk.composed import Runtime
from peri_cli.sdk.runtime import RunSpec, build_from_spec, mcp_layers

SECRET_TOKEN = "7f3a-secret-canary"  # never an input value: a result showing it read the file
KEY_TOKEN = "9c1e-key-canary"
WORD = "alpha"  # in both files: a search for it finds them, an Edit of it changes them
EXECUTE = "ExecuteExtraTool"
KNOWN_READERS = {"Read", "Grep", "Glob"}  # the generator must find at least these
KNOWN_WRITERS = {"Write", "Edit"}


@dataclass
class Place:
    ws: Path
    home: Path

    @property
    def secret(self) -> Path:
        return self.ws / "secret"

    @property
    def key(self) -> Path:
        return self.home / ".ssh" / "id_rsa"

    def candidates(self) -> list[str]:
        return ["secret", str(self.secret), WORD, "*", str(self.key), str(self.key.parent)]

    def state(self) -> tuple[bytes, int, int] | None:
        try:
            st = self.secret.stat()
            return self.secret.read_bytes(), st.st_mtime_ns, st.st_ino
        except FileNotFoundError:
            return None

    def reset(self) -> None:
        """The workspace as the test made it: the secret as it was, nothing else in it."""
        for path in self.ws.iterdir():
            if path.name not in ("secret", ".peri", "README.md"):
                if path.is_dir() and not path.is_symlink():
                    _remove_tree(path)
                else:
                    path.unlink()
        if self.secret.is_dir() and not self.secret.is_symlink():
            _remove_tree(self.secret)
        self.secret.unlink(missing_ok=True)
        self.secret.write_text(f"{WORD} secret {SECRET_TOKEN}\n")
        os.utime(self.secret, ns=(1_000_000_000, 1_000_000_000))


def _remove_tree(path: Path) -> None:
    for child in path.iterdir():
        if child.is_dir() and not child.is_symlink():
            _remove_tree(child)
        else:
            child.unlink()
    path.rmdir()


@dataclass
class Outcome:
    tool: str
    params: dict[str, Any]
    output: str = ""
    asked: list[str] = field(default_factory=list)  # the reasons of the questions it raised
    wrote: bool = False

    def read_secret(self, place: Place) -> bool:
        return SECRET_TOKEN in self.output or _names(self.output, place.secret, place.ws)

    def read_key(self, place: Place) -> bool:
        return KEY_TOKEN in self.output or _names(self.output, place.key, place.ws)


def _names(output: str, path: Path, ws: Path) -> bool:
    """A result line that is the file's path (a listing, a search's matching files)."""
    forms = {str(path), path.name}
    if path.is_relative_to(ws):
        forms.add(str(path.relative_to(ws)))
    lines = (line.strip() for line in output.splitlines())
    return any(ln in forms or any(ln.startswith(f"{f}:") for f in forms) for ln in lines)


def inputs(tool: Tool, place: Place) -> Iterator[dict[str, Any]]:
    """The base input and its one-field variations, from the tool's own schema."""
    schema = tool.spec().input_schema
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    base = {name: _base_value(spec) for name, spec in props.items() if name in required}
    yield base
    for name, spec in props.items():
        if _accepts_string(spec):
            for value in place.candidates():
                if base.get(name) != value:
                    yield {**base, name: value}


def _accepts_string(spec: dict[str, Any]) -> bool:
    if "enum" in spec:
        return False
    kinds = [spec.get("type"), *(s.get("type") for s in spec.get("anyOf", []))]
    return "string" in kinds


def _base_value(spec: dict[str, Any]) -> Any:
    if _accepts_string(spec):
        return "secret"
    if "enum" in spec:
        return spec["enum"][0]
    kind = spec.get("type")
    return {"integer": spec.get("minimum", 1), "number": 1, "boolean": False, "array": []}.get(
        kind, {}
    )


class Model:
    """Answers `variant:N` with that variant's one call, and everything else (the call's result,
    a SubAgent's task) with a plain reply."""

    def __init__(self) -> None:
        self.calls: dict[str, ScriptedCall] = {}

    def __call__(self, request: Any) -> ScriptedReply:
        last = request.messages[-1]
        text = "".join(getattr(p, "text", "") for p in last.content)
        if last.role == "user" and text in self.calls:
            return ScriptedReply(tool_calls=[self.calls[text]])
        return ScriptedReply(text="done")


class _Forever(list):  # type: ignore[type-arg]
    """A reply list that never runs out (ScriptedProvider pops from it)."""

    def __init__(self, item: Any) -> None:
        super().__init__([item])
        self.item = item

    def pop(self, index: int = -1) -> Any:
        return self.item


def build(place: Place, deny: list[str]) -> tuple[Runtime, Model]:
    server = {"time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]}}
    env = {"HOME": str(place.home), "PERI_HOME": str(place.home / ".peri")}
    env |= {"PATH": os.environ.get("PATH", ""), "ANTHROPIC_API_KEY": "sk-unused"}
    spec = RunSpec(
        workspace=place.ws,
        env=env,
        provider="anthropic",
        permission_mode="bypass",
        disallowed_tools=deny,
        extra_layers=mcp_layers(server),
    )
    runtime = build_from_spec(spec)
    model = Model()
    provider = ScriptedProvider()
    provider.replies = _Forever(model)
    runtime._provider = provider
    return runtime, model


async def wait_for_mcp(runtime: Runtime) -> None:
    """Until the time server's tools are in the session's registry."""
    assert runtime.mcp is not None and runtime.agent is not None
    assert await runtime.mcp.wait_ready("time", 60), "mcp-server-time never connected"
    runtime.mcp.contribution(None)  # what runs before each request: its tools join the registry


async def run_all(
    runtime: Runtime, model: Model, place: Place, only: set[str] | None
) -> list[Outcome]:
    agent = runtime.agent
    assert agent is not None
    out: list[Outcome] = []
    tools = agent.tools.all()
    counter = itertools.count()
    for tool in tools:
        deferred = tool.name in agent.tools.deferred
        for params in inputs(tool, place):
            n = next(counter)
            label = f"variant:{n}"
            outcome = Outcome(tool.name, params)
            if only is not None and json.dumps([tool.name, params], sort_keys=True) not in only:
                continue
            call = (
                ScriptedCall(EXECUTE, {"tool_name": tool.name, "params": params})
                if deferred
                else ScriptedCall(tool.name, params)
            )
            model.calls[label] = call
            place.reset()
            before = place.state()
            async for event in agent.run(label):
                if isinstance(event, PermissionRequested):
                    outcome.asked.append(event.reason)
                    event.future.set_result("deny")  # a headless run cannot ask
                elif isinstance(event, ToolFinished) and event.name in (tool.name, EXECUTE):
                    outcome.output += event.output
            outcome.wrote = place.state() != before
            out.append(outcome)
    return out


def key_of(outcome: Outcome) -> str:
    return json.dumps([outcome.tool, outcome.params], sort_keys=True)


@dataclass
class Passes:
    place: Place
    first: list[Outcome]  # every variant, no rules
    second: list[Outcome]  # those that touched the secret, again under the deny rules


@pytest.fixture(scope="module")
def passes(tmp_path_factory: pytest.TempPathFactory) -> Passes:
    root = tmp_path_factory.mktemp("every-tool")
    ws, home = root / "ws", root / "home"
    (home / ".ssh").mkdir(parents=True)
    ws.mkdir()
    (ws / "README.md").write_text("# a project\n")
    place = Place(ws, home)
    place.key.write_text(f"{WORD} secret {KEY_TOKEN}\n")
    place.reset()
    first, second = asyncio.run(_passes(place))
    return Passes(place, first, second)


async def _passes(place: Place) -> tuple[list[Outcome], list[Outcome]]:
    runtime, model = build(place, [])
    try:
        await wait_for_mcp(runtime)
        first = await run_all(runtime, model, place, None)
    finally:
        runtime.close()
    touching = {key_of(o) for o in first if o.wrote or o.read_secret(place)}
    runtime, model = build(place, ["Read(./secret)", "Edit(./secret)"])
    try:
        await wait_for_mcp(runtime)
        second = await run_all(runtime, model, place, touching)
    finally:
        runtime.close()
    return first, second


def test_every_registered_tool_is_called_mcp_and_deferred_ones_included(passes: Passes) -> None:
    tools = {o.tool for o in passes.first}
    assert {"Read", "Write", "Edit", "Bash", "Glob", "Grep", "WebFetch", "Agent"} <= tools
    assert any(t.startswith("mcp__time__") for t in tools), tools  # a real server's tools too
    place = passes.place
    readers = {o.tool for o in passes.first if o.read_secret(place)}
    writers = {o.tool for o in passes.first if o.wrote}
    assert readers >= KNOWN_READERS and writers >= KNOWN_WRITERS, (readers, writers)


def test_no_tool_hands_over_a_hidden_path_without_asking(passes: Passes) -> None:
    leaked = [(o.tool, o.params, o.output[:80]) for o in passes.first if o.read_key(passes.place)]
    assert leaked == [], f"handed over ~/.ssh without asking: {leaked[:3]}"
    asked = {o.tool for o in passes.first if any("hidden path" in why for why in o.asked)}
    assert asked >= KNOWN_READERS, asked


def test_read_and_edit_deny_rules_hold_for_every_tool_that_touched_the_file(
    passes: Passes,
) -> None:
    place = passes.place
    touched = {key_of(o) for o in passes.first if o.wrote or o.read_secret(place)}
    assert len(passes.second) == len(touched)
    still = [(o.tool, o.params) for o in passes.second if o.wrote or o.read_secret(place)]
    assert still == [], f"a deny rule did not hold: {still[:5]}"
