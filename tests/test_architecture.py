"""The core stays headless: no UI, SDK or network package is imported anywhere under core/."""

import ast
from pathlib import Path

import peri_cli.core

FORBIDDEN = {
    "textual",
    "rich",
    "anthropic",
    "openai",
    "httpx",
    "httpx2",
    "mcp",
    "requests",
    "aiohttp",
    "urllib3",
    "socket",
    "http",
    "peri_cli.tui",
    "peri_cli.providers",
    "peri_cli.tools",
}


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_core_imports_no_ui_sdk_or_network_package() -> None:
    core = Path(peri_cli.core.__file__).parent
    offenders = []
    for path in sorted(core.rglob("*.py")):
        for name in imported_modules(path):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN):
                offenders.append(f"{path.relative_to(core)} imports {name}")
    assert offenders == []


def test_checker_sees_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    import textual.app\n")
    assert "textual.app" in imported_modules(bad)


TUI_FORBIDDEN = {
    "peri_cli.providers",
    "peri_cli.tools",
    "peri_cli.runtime",
    "peri_cli.mcp",
    "anthropic",
    "openai",
    "mcp",
}


def test_tui_reaches_no_provider_tool_or_composition_module() -> None:
    """The TUI asks the core's session host for what it needs; it never builds agents."""
    tui = Path(peri_cli.core.__file__).parent.parent / "tui"
    offenders = []
    for path in sorted(tui.rglob("*.py")):
        for name in imported_modules(path):
            if any(name == f or name.startswith(f + ".") for f in TUI_FORBIDDEN):
                offenders.append(f"{path.relative_to(tui)} imports {name}")
    assert offenders == []
