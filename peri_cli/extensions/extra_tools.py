"""Deferred tools: `SearchExtraTools` finds them, `ExecuteExtraTool` runs them.

Deferred tools (MCP tools, rarely used built-ins) keep their schemas out of every request; the model
searches the session's registry when it needs one. Permission checks, rules and hooks see the tool
an `ExecuteExtraTool` call names, never the wrapper: the loop asks the wrapper to `unwrap` the call.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from peri_cli.base.provider import ToolSpec
from peri_cli.base.tool import (
    NO_READS,
    NOTHING,
    PydanticTool,
    Reads,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
    ToolRegistry,
    ToolTraits,
    Writes,
)

SEARCH_NAME = "SearchExtraTools"
EXECUTE_NAME = "ExecuteExtraTool"
MAX_RESULTS = 5
SOURCE_WAIT = 30.0  # seconds a search or execute waits for servers still connecting
_K1, _B = 1.2, 0.75
_NAME_WEIGHT = 3  # a query word in a tool's name counts as much as three in its description


@runtime_checkable
class Unwrapping(Protocol):
    """A tool that stands for another: the loop decides and runs the target it names."""

    async def unwrap(self, raw: dict[str, Any]) -> tuple[Tool, dict[str, Any]]: ...


def words(text: str) -> list[str]:
    """Search words: names split on `mcp__server__`, `_`, `-`, `.` and camelCase; lowercased."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def rank(query: str, specs: Sequence[ToolSpec], limit: int = MAX_RESULTS) -> list[ToolSpec]:
    """BM25 over names (weighted) and descriptions; an exact name wins outright."""
    exact = [s for s in specs if s.name.lower() == query.strip().lower()]
    terms = set(words(query))
    if not terms:
        return exact[:limit]
    docs = [words(s.name) * _NAME_WEIGHT + words(s.description) for s in specs]
    n = len(docs)
    avg = sum(map(len, docs)) / n if n else 0.0
    df = Counter(t for doc in docs for t in set(doc) if t in terms)
    scored: list[tuple[float, int]] = []
    for i, doc in enumerate(docs):
        tf = Counter(t for t in doc if t in terms)
        score = 0.0
        for term, f in tf.items():
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            score += idf * f * (_K1 + 1) / (f + _K1 * (1 - _B + _B * len(doc) / (avg or 1)))
        if score > 0:
            scored.append((score, i))
    scored.sort(key=lambda x: (-x[0], specs[x[1]].name))
    ranked = [specs[i] for _, i in scored if specs[i] not in exact]
    return [*exact, *ranked][:limit]


async def _wait_for_sources(registry: ToolRegistry, name: str | None = None) -> list[str]:
    """Wait (bounded) for servers still connecting; the names of those still not ready."""
    for source in registry.pending_sources(name):
        await source.wait(SOURCE_WAIT)
    return [s.name for s in registry.pending_sources(name)]


class SearchParams(BaseModel):
    query: str = Field(
        description="Words describing the capability you need, or an exact tool name."
    )


class SearchExtraTools(PydanticTool[SearchParams]):
    name = SEARCH_NAME
    kind = "read"
    params = SearchParams
    traits = ToolTraits("deferred")

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry

    def description(self) -> str:
        return (
            "Search the extra tools that are available but not listed (MCP server tools and "
            "rarely used tools). Returns up to 5 matches with their names, descriptions and "
            f"input schemas; run one with {EXECUTE_NAME}."
        )

    async def call(self, params: SearchParams, ctx: ToolContext) -> ToolOutput:
        not_ready = await _wait_for_sources(self._registry)
        specs = [t.spec() for t in self._registry.deferred.values()]
        found = rank(params.query, specs)
        lines: list[str] = []
        if found:
            lines.append(f"{len(found)} tool(s) match {params.query!r}:")
            for spec in found:
                lines.append(
                    json.dumps(
                        {
                            "name": spec.name,
                            "description": spec.description,
                            "input_schema": spec.input_schema,
                        },
                        ensure_ascii=False,
                    )
                )
            lines.append(
                f"Run one with {EXECUTE_NAME}(tool_name, params). These schemas may be removed "
                "from the conversation when it is compacted; search again if you need them."
            )
        else:
            lines.append(f"No extra tool matches {params.query!r} among {len(specs)} tools.")
        if not_ready:
            lines.append(f"Not ready yet (still connecting or failed): {', '.join(not_ready)}.")
        return ToolOutput.text("\n".join(lines))


class ExecuteParams(BaseModel):
    tool_name: str = Field(description="The exact name of the tool to run.")
    params: dict[str, Any] = Field(
        default_factory=dict, description="The tool's input, matching its input schema."
    )


class ExecuteExtraTool(PydanticTool[ExecuteParams]):
    """Runs any registered tool by name; the loop unwraps it, so this `call` is rarely used."""

    name = EXECUTE_NAME
    kind = "external"
    params = ExecuteParams
    traits = ToolTraits("deferred")

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry

    def description(self) -> str:
        return (
            f"Run a tool found with {SEARCH_NAME} (or any listed tool) by name, with its input "
            "as `params`. The input is checked against that tool's schema, and the tool asks "
            "permission as it would when called directly."
        )

    async def unwrap(self, raw: dict[str, Any]) -> tuple[Tool, dict[str, Any]]:
        """The tool this call names and the input for it; ToolError when there is none."""
        call = self.validate(raw)
        tool = self._registry.get(call.tool_name)
        if tool is None:
            not_ready = await _wait_for_sources(self._registry, call.tool_name)
            tool = self._registry.get(call.tool_name)
            if tool is None:
                why = f" (servers not ready: {', '.join(not_ready)})" if not_ready else ""
                raise ToolError(
                    f"No tool named {call.tool_name!r}{why}. Use {SEARCH_NAME} to find the "
                    "exact name."
                )
        if isinstance(tool, Unwrapping):
            raise ToolError(f"{EXECUTE_NAME} cannot run {call.tool_name}; call it directly.")
        return tool, call.params

    def reads(self, params: ExecuteParams, ctx: ToolContext) -> Reads:
        tool = self._registry.get(params.tool_name)
        if tool is None:
            return NO_READS
        return tool.reads(tool.validate(params.params), ctx)

    def writes(self, params: ExecuteParams, ctx: ToolContext) -> Writes:
        tool = self._registry.get(params.tool_name)
        if tool is None:
            return NOTHING
        return tool.writes(tool.validate(params.params), ctx)

    async def call(self, params: ExecuteParams, ctx: ToolContext) -> ToolOutput:
        tool, raw = await self.unwrap(params.model_dump())
        return await tool.call(tool.validate(raw), ctx)


def offer_extra_tools(registry: ToolRegistry) -> None:
    """Add the two wrappers as direct tools when the session has anything deferred (or servers
    that may bring some); decided when the agent is built, so the tools list stays stable."""
    if registry.deferred or registry.sources:
        registry.add(SearchExtraTools(registry))
        registry.add(ExecuteExtraTool(registry))
