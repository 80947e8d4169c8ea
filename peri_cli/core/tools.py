"""The tool port and registry: direct tools ride in every request, deferred ones on demand."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ValidationError

from peri_cli.core.childenv import child_env
from peri_cli.core.messages import ImagePart, TextPart
from peri_cli.core.provider import ToolSpec

# What a tool does, for the permission policy: read-only, changes files, runs commands, or external.
ToolKind = Literal["read", "write", "execute", "external"]


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may know: where the workspace is, where it may keep side files, and
    the environment its child processes start with (Peri's credentials already removed)."""

    workspace: Path
    session_dir: Path
    env: Mapping[str, str] = field(default_factory=lambda: child_env(os.environ))

    def resolve(self, file_path: str) -> Path:
        """A model-given path, relative ones against the workspace, with `~` expanded."""
        path = Path(file_path).expanduser()
        return path if path.is_absolute() else self.workspace / path


@dataclass(frozen=True)
class ToolOutput:
    content: list[TextPart | ImagePart]
    is_error: bool = False

    @classmethod
    def text(cls, text: str) -> ToolOutput:
        return cls([TextPart(text=text)])

    @classmethod
    def error(cls, text: str) -> ToolOutput:
        return cls([TextPart(text=text)], is_error=True)


class ToolError(Exception):
    """A failure the model should read and act on; becomes an error tool result."""


class Tool(Protocol):
    name: ClassVar[str]
    kind: ClassVar[ToolKind]
    Params: ClassVar[type[BaseModel]]

    def description(self) -> str: ...

    def target_paths(self, params: BaseModel, ctx: ToolContext) -> list[Path]:
        """Files this call would change (for the workspace check); empty for non-writers."""
        ...

    async def call(self, params: BaseModel, ctx: ToolContext) -> ToolOutput: ...


def spec_of(tool: Tool) -> ToolSpec:
    schema = tool.Params.model_json_schema()
    schema.pop("title", None)
    return ToolSpec(name=tool.name, description=tool.description(), input_schema=schema)


def parse_params(tool: Tool, raw: dict[str, Any]) -> BaseModel:
    """Validate model-given input; raises ToolError with a message the model can act on."""
    try:
        return tool.Params.model_validate(raw)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in err['loc']) or 'input'}: {err['msg']}" for err in e.errors()
        )
        raise ToolError(
            f"Invalid input for {tool.name}: {problems}. Fix the arguments and retry."
        ) from e


@dataclass
class ToolRegistry:
    """Direct tools are sent with every request; deferred ones only through SearchExtraTools."""

    direct: dict[str, Tool] = field(default_factory=dict)
    deferred: dict[str, Tool] = field(default_factory=dict)
    _specs: list[ToolSpec] | None = field(default=None, repr=False)

    def add(self, tool: Tool, *, deferred: bool = False) -> None:
        (self.deferred if deferred else self.direct)[tool.name] = tool
        self._specs = None

    def get(self, name: str) -> Tool | None:
        return self.direct.get(name) or self.deferred.get(name)

    def specs(self) -> list[ToolSpec]:
        """Schemas of the direct tools; built once, since every request carries them."""
        if self._specs is None:
            self._specs = [spec_of(t) for t in self.direct.values()]
        return list(self._specs)
