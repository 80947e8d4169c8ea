"""The built-in tools, one per module, each with its model-facing description in a sibling .md."""

from __future__ import annotations

from peri_cli.base.tool import Tool
from peri_cli.tools.bash import BashTool
from peri_cli.tools.edit import EditTool
from peri_cli.tools.glob import GlobTool
from peri_cli.tools.grep import GrepTool
from peri_cli.tools.read import ReadTool
from peri_cli.tools.write import WriteTool


def builtin_tools() -> list[Tool]:
    """One instance of each built-in file and shell tool."""
    return [ReadTool(), WriteTool(), EditTool(), BashTool(), GlobTool(), GrepTool()]
