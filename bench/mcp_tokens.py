"""MCP: the tokens 3 servers with 40 tools add to every request, deferred (only the wrappers'
schemas ride along) vs direct (all 40 schemas); and the TUI's start with 3 slow servers
configured vs none.

    .venv/bin/python bench/mcp_tokens.py                 # ~1 minute
    .venv/bin/python bench/mcp_tokens.py --tui-runs 9 --delay 5

The servers are bench/_mcp_catalog.py (raw JSON-RPC over stdio, tool schemas modelled on common
GitHub, filesystem and Postgres servers: 16 + 12 + 12 tools), run through the real manager and
registry. Tokens are counted as `peri` counts a request's tools list (o200k, name + description +
input schema per tool). TUI start is measured under tmux as bench/start.py does: first screen, and
the moment a typed probe is echoed, in interleaved rounds; the slow servers each wait `--delay`
seconds before answering `initialize`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util as u

from peri_cli.base.provider import ToolSpec
from peri_cli.base.tool import ToolContext, ToolRegistry
from peri_cli.context.tokens import default_counter
from peri_cli.extensions.extra_tools import ExecuteExtraTool, SearchExtraTools, offer_extra_tools
from peri_cli.mcp.config import ServerConfig
from peri_cli.mcp.manager import McpManager
from peri_cli.tools import builtin_tools

CATALOG = Path(__file__).resolve().parent / "_mcp_catalog.py"
CATALOGS = ("github", "filesystem", "postgres")


def servers(*, always_load: bool, delay: float = 0.0) -> list[ServerConfig]:
    return [
        ServerConfig(
            name=name,
            scope="user",
            source=CATALOG,
            transport="stdio",
            command=u.PY,
            args=(str(CATALOG), name, "--delay", str(delay)),
            always_load=always_load,
        )
        for name in CATALOGS
    ]


def tokens(specs: list[ToolSpec]) -> int:
    if not specs:
        return 0
    as_sent = [
        {"name": s.name, "description": s.description, "input_schema": s.input_schema}
        for s in specs
    ]
    return default_counter().count_json(as_sent)


async def registry_with(manager: McpManager | None) -> ToolRegistry:
    """An agent's registry as the runtime builds it, once every server is ready."""
    registry = ToolRegistry()
    for tool in builtin_tools():
        registry.add(tool)
    if manager is not None:
        binding = manager.attach(registry)
        for source in registry.sources.values():
            await source.wait(30)
        binding.sync()
    offer_extra_tools(registry)
    return registry


async def token_figures() -> tuple[list[list[object]], dict[str, Any]]:
    base = tokens((await registry_with(None)).specs())
    rows: list[list[object]] = [["built-in tools only (no MCP)", 0, base, "", ""]]
    facts: dict[str, Any] = {}
    for mode in ("deferred", "direct"):
        manager = McpManager(servers(always_load=mode == "direct"))
        manager.start()
        try:
            registry = await registry_with(manager)
            mcp_tools = [t for t in registry.all() if t.name.startswith("mcp__")]
            sent = registry.specs()
            facts[mode] = {
                "mcp_tools": len(mcp_tools),
                "mcp_in_request": sum(s.name.startswith("mcp__") for s in sent),
                "request": tokens(sent),
                "schemas": tokens([t.spec() for t in mcp_tools]),
            }
            if mode == "deferred":  # the wrappers really reach the tools: one search
                search = SearchExtraTools(registry)
                out = await search.call(
                    search.validate({"query": "create a github issue"}),
                    ToolContext(workspace=Path.cwd(), session_dir=Path.cwd()),
                )
                text = out.content[0].text  # type: ignore[union-attr]
                facts["search_tokens"] = default_counter().count_text(text)
                facts["search_top"] = json.loads(text.splitlines()[1])["name"]
        finally:
            manager.close()
    scratch = ToolRegistry()
    wrappers = tokens([SearchExtraTools(scratch).spec(), ExecuteExtraTool(scratch).spec()])
    d, x = facts["deferred"], facts["direct"]
    rows.append(
        [
            f"deferred: {d['mcp_tools']} MCP tools, {d['mcp_in_request']} sent",
            len(CATALOGS),
            d["request"],
            d["request"] - base,
            "",
        ]
    )
    rows.append(
        [
            f"direct (alwaysLoad): {x['mcp_tools']} MCP tools, {x['mcp_in_request']} sent",
            len(CATALOGS),
            x["request"],
            x["request"] - base,
            "",
        ]
    )
    facts |= {"base": base, "wrappers": wrappers, "all_schemas": x["schemas"]}
    return rows, facts


def tui_figures(tui_runs: int, delay: float) -> str:
    if not u.tmux_available():
        return "TUI start: unavailable (tmux not installed)"
    lines: list[str] = []
    with u.temp_home() as (home, ws):
        quiet_home = home.parent / "home-no-servers"
        quiet_home.mkdir()
        block = {
            s.name: {"command": s.command, "args": list(s.args)}
            for s in servers(always_load=False, delay=delay)
        }
        (home / "settings.json").write_text(json.dumps({"mcpServers": block}))
        cases = {
            "peri, no MCP servers": u.bench_env(quiet_home),
            f"peri, 3 slow MCP servers ({delay:g} s each)": u.bench_env(home),
        }
        samples: dict[str, list[u.StartSample]] = {name: [] for name in cases}
        with u.Tmux() as tmux:
            for r in range(tui_runs + 1):
                for name, env in cases.items():
                    s = u.measure_tui_start(tmux, [u.PERI], env, ws)
                    if r:  # round 0 warms caches
                        samples[name].append(s)
                    time.sleep(0.2)
        floor = [s for s in samples["peri, no MCP servers"] if s.ok]
        f_first = u.median([s.first_draw for s in floor])
        f_ready = u.median([s.ready for s in floor])
        rows = []
        for name, ss in samples.items():
            good = [s for s in ss if s.ok]
            if not good:
                rows.append([name, "failed: " + ss[0].error, "", "", ""])
                continue
            first, ready = u.median([s.first_draw for s in good]), u.median([s.ready for s in good])
            rows.append(
                [name, u.ms(first), u.ratio(first, f_first), u.ms(ready), u.ratio(ready, f_ready)]
            )
        lines.append(f"## TUI start under tmux (120x40), median of {tui_runs} interleaved rounds")
        lines.append(u.table(["case", "first screen", "vs none", "accepts input", "vs none"], rows))
        slow = [s for s in samples[list(cases)[1]] if s.ok]
        if slow and floor:
            r = u.median([s.ready for s in slow]) / f_ready
            lines.append(
                f"\ntarget: no worse than without servers (accepts input): {r:.2f}x -> "
                f"{u.verdict(r <= 1.15)} (1.15x allowed for noise)"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tui-runs", type=int, default=7, help="rounds of the TUI start cases")
    ap.add_argument("--delay", type=float, default=3.0, help="seconds each slow server waits")
    ap.add_argument("--no-tui", action="store_true", help="only the token figures")
    args = ap.parse_args()
    u.banner("bench/mcp_tokens.py — MCP tools in every request, and start-up with MCP")

    rows, f = asyncio.run(token_figures())
    for row in rows[1:]:
        row[4] = u.ratio(row[3], rows[2][3]) if isinstance(row[3], int) and rows[2][3] else ""
    print("## Tokens of the tools list in every request (o200k, as peri counts it)")
    print(u.table(["registry", "servers", "tools list", "MCP adds", "vs direct"], rows))
    deferred_adds = f["deferred"]["request"] - f["base"]
    saved = 1 - deferred_adds / f["all_schemas"]
    print(
        f"\nthe 40 MCP schemas alone: {f['all_schemas']} tokens; the two wrappers "
        f"(SearchExtraTools + ExecuteExtraTool): {f['wrappers']} tokens (direct mode sends both, "
        "since configured servers bring the wrappers)"
    )
    print(
        f"one search when a tool is needed ('create a github issue' -> {f['search_top']}): "
        f"{f['search_tokens']} tokens, once, in the conversation"
    )
    print(
        f"target: deferred adds >= 80% fewer tokens than the 40 schemas: {deferred_adds} vs "
        f"{f['all_schemas']}, {saved:.1%} fewer -> {u.verdict(saved >= 0.8)}"
    )
    print()
    if not args.no_tui:
        print(tui_figures(args.tui_runs, args.delay))


if __name__ == "__main__":
    main()
