from pathlib import Path

import peri_cli.tools
from peri_cli.base.tool import ToolContext, ToolRegistry
from peri_cli.tools import builtin_tools

CONTRACT_INPUTS = {
    "Read": {"file_path", "offset", "limit"},
    "Write": {"file_path", "content"},
    "Edit": {"file_path", "old_string", "new_string", "replace_all"},
    "Bash": {"command", "timeout", "run_in_background", "dangerouslyDisableSandbox"},
    "Glob": {"pattern", "path", "include_ignored"},
    "Grep": {"pattern", "path", "glob", "output_mode", "include_ignored"},
}
KINDS = {"Read": "read", "Glob": "read", "Grep": "read", "Write": "write", "Edit": "write"}


def test_one_of_each_with_contract_inputs_and_kinds() -> None:
    tools = builtin_tools()
    names = [t.name for t in tools]
    assert names[:6] == ["Read", "Write", "Edit", "Bash", "Glob", "Grep"]  # then any new ones
    assert len(names) == len(set(names))
    for tool in tools:
        spec = tool.spec()
        assert all(p.get("description") for p in spec.input_schema["properties"].values())
        if tool.name in CONTRACT_INPUTS:
            assert set(spec.input_schema["properties"]) == CONTRACT_INPUTS[tool.name]
            assert tool.kind == KINDS.get(tool.name, "execute")
        if tool.traits.read_only:  # what the explore SubAgent gets changes nothing
            assert tool.kind == "read"


def test_descriptions_come_from_sibling_markdown() -> None:
    package = Path(peri_cli.tools.__file__).parent
    for tool in builtin_tools():
        module = type(tool).__module__.rsplit(".", 1)[1]
        assert tool.description() == (package / f"{module}.md").read_text(encoding="utf-8")


def test_writes_name_the_files_writers_change(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    for tool in builtin_tools():
        registry.add(tool)
    sample = {
        "Read": {"file_path": "a"},
        "Write": {"file_path": "a", "content": ""},
        "Edit": {"file_path": "a", "old_string": "x", "new_string": "y"},
        "Bash": {"command": "rm -rf a"},
        "Glob": {"pattern": "*"},
        "Grep": {"pattern": "x"},
    }
    for name, raw in sample.items():
        found = registry.get(name)
        assert found is not None
        writes = found.writes(found.validate(raw), ctx)
        if found.kind == "write":
            assert writes.paths == (ctx.workspace.resolve() / "a",) and not writes.anything
        elif found.kind == "read":
            assert not writes, name
        else:  # a shell command may change anything
            assert writes.anything, name
