"""The README's tables of public names stay in step with the code: every settings key of the
settings model, and every built-in tool, has its row, and no row names one that is gone."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from peri_cli.base.settings import Settings
from peri_cli.tools import builtin_tools, builtin_traits, capability_tools

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


def _table(heading: str) -> list[str]:
    """The first cells (between backticks) of the table under `### heading`."""
    section = README.split(f"\n### {heading}\n", 1)[1].split("\n#", 1)[0]
    return re.findall(r"^\| `([^`]+)` \|", section, re.M)


def _keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """The dotted keys of a settings model; a nested section's keys, not the section itself."""
    out: list[str] = []
    for name, field in model.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            out += _keys(kind, f"{prefix}{name}.")
        else:
            out.append(prefix + name)
    return out


def test_the_settings_table_lists_every_key_of_the_settings_model() -> None:
    documented = _table("Settings")
    assert sorted(documented) == sorted(_keys(Settings))
    assert len(documented) == len(set(documented))


def test_the_tools_table_lists_every_built_in_tool() -> None:
    documented = [n for n in _table("Tools") if not n.startswith("mcp__")]
    assert sorted(documented) == sorted(builtin_traits())


def test_the_meta_harness_table_names_each_capabilitys_tools() -> None:
    section = README.split("\n## Meta Harness\n", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\s*\| `([a-z]+)` \| (.*) \|$", section, re.M))
    for capability, tools in capability_tools().items():
        named = re.findall(r"`([A-Za-z]+)`", rows[capability])
        assert set(tools) <= set(named), (capability, tools, rows[capability])


REFERENCE = (Path(__file__).parent.parent / "docs" / "reference.md").read_text(encoding="utf-8")


def test_the_reference_gives_every_built_in_tools_input_as_its_schema_has_it() -> None:
    from peri_cli.extensions.extra_tools import ExecuteExtraTool, SearchExtraTools
    from peri_cli.tools.agent import AgentTool
    from peri_cli.tools.exit_plan_mode import ExitPlanModeTool
    from peri_cli.tools.skill import SkillTool
    from peri_cli.tools.webfetch import WebFetchTool

    section = REFERENCE.split("\n## Tool inputs\n", 1)[1]
    rows = dict(re.findall(r"^\| `(\w+)` \| (.*) \|$", section, re.M))
    classes: list[Any] = [type(t) for t in builtin_tools()]
    classes += [AgentTool, SkillTool, WebFetchTool, ExitPlanModeTool]
    classes += [SearchExtraTools, ExecuteExtraTool]
    assert sorted(rows) == sorted(c.name for c in classes)
    for cls in classes:
        schema = cls.params.model_json_schema()
        required = set(schema.get("required", ()))
        expected = [f"{k}{'' if k in required else '?'}" for k in schema["properties"]]
        given = re.findall(r"`(\w+\??)`", rows[cls.name])
        assert given == expected, cls.name


def test_the_reference_names_every_flag_of_the_command_line() -> None:
    from peri_cli.cli import build_parser

    for action in build_parser()._actions:
        for flag in action.option_strings:
            assert f"`{flag}" in REFERENCE or f", `{flag}`" in REFERENCE, flag


def test_the_reference_names_every_flag_of_peri_mcp_serve() -> None:
    from peri_cli.mcpserve.cli import parser

    serve = parser()._subparsers._group_actions[0].choices["serve"]  # type: ignore[union-attr]
    for action in serve._actions:
        for flag in action.option_strings:
            if flag not in ("-h", "--help"):
                assert f"`peri mcp serve {flag}" in REFERENCE, flag
