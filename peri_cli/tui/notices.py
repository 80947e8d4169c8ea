"""What the app says about itself: the startup facts and warnings, the missing-key help, and
the usage already recorded in a resumed session."""

from __future__ import annotations

from collections.abc import Sequence

from peri_cli.agent.host import SessionHost
from peri_cli.base.models import cost_usd
from peri_cli.session.transcript import Entry, MessageEntry
from peri_cli.tui.bridge import add_cost
from peri_cli.tui.widgets.notice import Level


def no_key_problem(runtime: SessionHost) -> str | None:
    """How to make the provider reachable, or None when it is."""
    problem = runtime.credentials_problem
    if not problem:
        return None
    return (
        f"{problem}\nPeri is open, but cannot reach a model until then. For example:\n"
        f"  export {runtime.provider_name.upper()}_API_KEY=…   (then restart peri)\n"
        "  export ANTHROPIC_BASE_URL=http://localhost:8080   (an Anthropic-compatible server)\n"
        "  export OPENAI_BASE_URL=http://localhost:11434/v1; peri --provider openai   (Ollama, "
        "vLLM, llama.cpp)"
    )


BYPASS_WARNING = (
    "Bypass mode: every tool call runs without asking, edits and commands included "
    "(deny rules and the sandbox still hold). Shift+Tab leaves it."
)


def startup_notices(runtime: SessionHost, warned: int = 0) -> list[tuple[str, Level]]:
    """Where Peri runs, warnings not shown yet, the guide files loaded, a missing key."""
    where = runtime.workspace.name or str(runtime.workspace)
    out: list[tuple[str, Level]] = [(f"Peri in {where} · /help lists commands and keys", "info")]
    if runtime.mode == "bypass" and not warned:
        out.append((BYPASS_WARNING, "error"))
    out += [(w, "warning") for w in runtime.warnings[warned:]]
    if runtime.session is not None:
        snapshot = runtime.session.snapshot
        if snapshot.guide_files:
            out.append(("Project guide: " + ", ".join(snapshot.guide_files), "info"))
        out += [(f"Guide: {w}", "warning") for w in snapshot.guide_warnings]
    problem = no_key_problem(runtime)
    if problem:
        out.append((problem, "error"))
    return out


def session_usage(entries: Sequence[Entry], model: str) -> tuple[float | None, float | None]:
    """(cost of every recorded reply, cached share of the last request) of a session."""
    total: float | None = 0.0
    share = None
    for entry in entries:
        if isinstance(entry, MessageEntry) and entry.usage is not None:
            total = add_cost(total, cost_usd(entry.model or model, entry.usage))
            if entry.cache_read_share is not None:
                share = entry.cache_read_share
    return total, share
