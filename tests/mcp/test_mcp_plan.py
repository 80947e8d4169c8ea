"""Project servers start only in a trusted workspace; one entry per name, later files winning."""

from __future__ import annotations

from pathlib import Path

from peri_cli.mcp.config import ServerConfig, ServerConfigs
from peri_cli.mcp.plan import NOT_APPROVED, UNTRUSTED, plan_servers


def cfg(name: str, scope: str, source: str, command: str = "c") -> ServerConfig:
    return ServerConfig(
        name=name,
        scope=scope,  # type: ignore[arg-type]
        source=Path(source),
        transport="stdio",
        command=command,
        raw={"command": command},
    )


USER = cfg("gh", "user", "settings.json", "user-gh")
PROJECT = cfg("gh", "project", ".mcp.json", "project-gh")
ONLY_PROJECT = cfg("db", "project", ".mcp.json")
ONLY_USER = cfg("time", "user", "settings.json")
ALL = ServerConfigs((USER, ONLY_USER, PROJECT, ONLY_PROJECT))


def names(configs: tuple[ServerConfig, ...]) -> list[tuple[str, str]]:
    return [(c.name, c.command) for c in configs]


def test_untrusted_workspace_starts_user_servers_only() -> None:
    plan = plan_servers(ALL, trusted=False)
    # the user's own `gh` still starts when the project's `gh` may not
    assert names(plan.start) == [("gh", "user-gh"), ("time", "c")]
    assert [(s.config.name, s.config.scope, s.reason) for s in plan.skipped] == [
        ("gh", "project", UNTRUSTED),
        ("db", "project", UNTRUSTED),
    ]


def test_trusted_workspace_project_wins_a_name() -> None:
    plan = plan_servers(ALL, trusted=True)
    assert names(plan.start) == [("gh", "project-gh"), ("time", "c"), ("db", "c")]
    ((skipped),) = plan.skipped
    assert skipped.config is USER and skipped.reason == "shadowed by the entry in .mcp.json"


def test_approval_is_asked_for_project_servers_only() -> None:
    asked: list[str] = []

    def approve(c: ServerConfig) -> bool:
        asked.append(f"{c.name}:{c.scope}")
        return c.name == "db"

    plan = plan_servers(ALL, trusted=True, approve=approve)
    assert sorted(asked) == ["db:project", "gh:project"]
    assert names(plan.start) == [("gh", "user-gh"), ("time", "c"), ("db", "c")]
    assert [(s.config.command, s.reason) for s in plan.skipped] == [("project-gh", NOT_APPROVED)]


def test_nothing_configured() -> None:
    plan = plan_servers(ServerConfigs(), trusted=True)
    assert plan.start == () and plan.skipped == ()
