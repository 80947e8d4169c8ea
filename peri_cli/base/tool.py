"""The tool port and registry: direct tools ride in every request, deferred ones on demand."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ValidationError

from peri_cli.base.childenv import child_env
from peri_cli.base.messages import ImagePart, TextPart
from peri_cli.base.ownership import WriteOwners
from peri_cli.base.provider import ToolSpec


class FileKeeper(Protocol):
    """Keeps the bytes of the files a call writes, before and after (the session's checkpoints,
    for /rewind); `session.checkpoints.Checkpointer` is the one the runtime gives."""

    def keep(self, paths: Iterable[Path]) -> list[Any]: ...
    def look(self, paths: Iterable[Path]) -> list[Any]: ...
    def record(
        self,
        phase: Literal["before", "after"],
        states: list[Any],
        *,
        call_id: str,
        agent: str | None,
    ) -> None: ...


class FilePort(Protocol):
    """Files through a program instead of the disk (`PeriOptions.files`): Read, Edit and Write
    use it when set. `read_text` raises FileNotFoundError for a file that is not there."""

    async def read_text(self, path: str) -> str: ...

    async def write_text(self, path: str, text: str) -> None: ...


@dataclass(frozen=True)
class SandboxedCommand:
    """A command line made to run inside the sandbox: start `argv` with `env`, and call
    `finish` once it has ended (the sandbox tidies what it set up for it)."""

    argv: list[str]
    env: dict[str, str]
    finish: Callable[[], None] = lambda: None
    # What the sandbox's network proxy refused while it ran, in words for the model (or None);
    # a refused HTTPS CONNECT leaves nothing in the command's own output to explain.
    network: Callable[[], str | None] = lambda: None


class CommandSandbox(Protocol):
    """The operating-system sandbox that Bash and Grep's helper run in (`peri_cli/sandbox/`;
    the runtime gives one when the sandbox is on and available)."""

    def covers(self, command: str) -> bool:
        """Whether this shell command runs inside (not one of `excludedCommands`)."""
        ...

    def wrap(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> SandboxedCommand:
        """`argv` as a command line that runs it inside the sandbox."""
        ...

    def explain(self, output: str, cwd: Path) -> str | None:
        """What in a command's output the sandbox refused, in words for the model (or None)."""
        ...


# What a tool does, for the permission policy: read-only, changes files, runs commands, or external.
ToolKind = Literal["read", "write", "execute", "external"]
# How an editor shows a call (ACP's `ToolKind`).
EditorKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]


@dataclass(frozen=True)
class ToolTraits:
    """What the rest of Peri knows about a tool without calling it; every room reads these
    instead of keeping a list of names."""

    capability: str | None = None  # the Meta Harness capability that brings it (None: none)
    read_only: bool = False  # changes nothing and runs nothing: the `explore` SubAgent has it
    card_arg: str | None = None  # the input field its card names ("file_path", "command")
    editor_kind: EditorKind = "other"  # how an editor (ACP) shows its calls
    deferred: bool = False  # kept out of the tools list, reached through SearchExtraTools


PLAIN = ToolTraits()


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may know: where the workspace is, where it may keep side files, and
    the environment its child processes start with (Peri's credentials already removed)."""

    workspace: Path
    session_dir: Path
    env: Mapping[str, str] = field(default_factory=lambda: child_env(os.environ))
    agent_id: str | None = None  # None: the main agent; else the SubAgent running the call
    call_id: str = ""  # the tool_use id of the call being run
    owners: WriteOwners = field(default_factory=WriteOwners)  # shared by all agents of a session
    # Keeps files before the loop lets a call write them (/rewind); shared like `owners`.
    checkpoints: FileKeeper | None = None
    # Set by the loop for the call being run: what it has done so far (a running command's
    # output, the latest replacing the earlier), shown live by the UI. Call often; it is cheap.
    progress: Callable[[str], None] | None = None
    # Files a Read deny rule or a hidden path keeps from the model: searches leave them out.
    read_denied: Callable[[Path], bool] | None = None
    # Pre-approve permission rules until the current turn ends (a skill's `allowed-tools`);
    # the flag: they come from a repository's file, which only a trusted workspace honours.
    grant: Callable[[Sequence[str], bool], None] | None = None
    # Read, Edit and Write go through this instead of the disk when set (a program's files).
    files: FilePort | None = None
    # Bash commands and Grep's helper run inside it when set (the sandbox is on and available).
    sandbox: CommandSandbox | None = None

    def report(self, text: str) -> None:
        """Tell the UI how the call is going (nothing happens when no one listens)."""
        if self.progress is not None:
            self.progress(text)

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


@runtime_checkable
class Prechecked(Protocol):
    """A tool that can tell from the files it would change that a call cannot succeed (an Edit
    whose `old_string` is not in the file): such a call fails at once instead of being put to
    the user first. Checked only where those files may be read without asking."""

    async def precheck(self, params: Any, ctx: ToolContext) -> str | None:
        """Why the call would fail (the error the model reads), or None."""
        ...


class ToolError(Exception):
    """A failure the model should read and act on; becomes an error tool result."""


@dataclass(frozen=True)
class Writes:
    """What one call changes: these resolved file paths, or anything at all (a shell command,
    an external tool), or nothing (a read-only call). Calls that write the same thing run in
    order; read-only calls run alongside anything."""

    paths: tuple[Path, ...] = ()
    anything: bool = False
    # The same files as the model named them (absolute, symlinks not followed): Edit rules match
    # a path as written too, so a link's own name is judged as well as where it leads.
    given: tuple[Path, ...] = ()

    def __bool__(self) -> bool:
        return self.anything or bool(self.paths)

    def conflicts(self, other: Writes) -> bool:
        if not (self and other):
            return False
        return self.anything or other.anything or not set(self.paths).isdisjoint(other.paths)


NOTHING = Writes()
ANYTHING = Writes(anything=True)


@dataclass(frozen=True)
class Reads:
    """What one call reads, as the model gave the paths (absolute, symlinks not followed): whole
    files, and folders (or files) searched. Read deny rules and the hidden paths are judged on
    these, so a tool that reads files must name them here."""

    files: tuple[Path, ...] = ()
    searches: tuple[Path, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.files or self.searches)


NO_READS = Reads()


def search_reads(ctx: ToolContext, path: str | None, pattern: str | None) -> Reads:
    """What a search of `path` (default: the workspace) for files matching a glob reads: the
    folders the pattern starts with before its first wildcard ("src/**/*.py" -> path/src)."""
    root = ctx.resolve(path) if path else ctx.workspace
    parts: list[str] = []
    for seg in (pattern or "").split("/")[:-1]:
        if any(c in seg for c in "*?[{"):
            break
        parts.append(seg)
    return Reads(searches=(root / "/".join(parts),))


class Tool(Protocol):
    """The one door for every capability: built-in tools, MCP tools, skills and SubAgent types all
    describe themselves per instance, since some are known only at run time."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> ToolKind: ...

    @property
    def traits(self) -> ToolTraits: ...

    def spec(self) -> ToolSpec:
        """Name, description and JSON input schema, as the model sees them."""
        ...

    def validate(self, raw: dict[str, Any]) -> Any:
        """Typed params from model-given input, or ToolError with a message the model can act
        on; called once per call."""
        ...

    def reads(self, params: Any, ctx: ToolContext) -> Reads:
        """The files and folders this call reads (for Read rules and the hidden paths)."""
        ...

    def writes(self, params: Any, ctx: ToolContext) -> Writes:
        """What this call would change (for the workspace check and for ordering calls)."""
        ...

    def subject(self, params: Any) -> str | None:
        """What a `Tool(glob)` rule matches in this call (Agent's type, Skill's name,
        WebFetch's `domain:HOST`); None: such rules do not apply."""
        ...

    async def call(self, params: Any, ctx: ToolContext) -> ToolOutput: ...


P = TypeVar("P", bound=BaseModel)


class PydanticTool(Generic[P]):
    """A tool whose input is a pydantic model (the built-in tools): schema and validation come
    from `params`; subclasses set `name`, `kind`, `params` and write `description` and `call`."""

    name: str
    kind: ToolKind
    params: type[P]
    traits: ToolTraits = PLAIN

    def description(self) -> str:
        raise NotImplementedError

    def spec(self) -> ToolSpec:
        schema = self.params.model_json_schema()
        schema.pop("title", None)
        return ToolSpec(name=self.name, description=self.description(), input_schema=schema)

    def validate(self, raw: dict[str, Any]) -> P:
        try:
            return self.params.model_validate(raw)
        except ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in err['loc']) or 'input'}: {err['msg']}"
                for err in e.errors()
            )
            raise ToolError(
                f"Invalid input for {self.name}: {problems}. Fix the arguments and retry."
            ) from e

    def reads(self, params: P, ctx: ToolContext) -> Reads:
        """Reads no files unless the tool says which."""
        return NO_READS

    def writes(self, params: P, ctx: ToolContext) -> Writes:
        """Read-only tools change nothing; any other kind may change anything unless it says."""
        return NOTHING if self.kind == "read" else ANYTHING

    def subject(self, params: P) -> str | None:
        return None

    async def call(self, params: P, ctx: ToolContext) -> ToolOutput:
        raise NotImplementedError


class ToolSource(Protocol):
    """Something that brings tools into the registry over time (an MCP server connecting in the
    background). A search or execute that needs its tools waits for it, up to its timeout."""

    @property
    def name(self) -> str: ...

    @property
    def tool_prefix(self) -> str:
        """Every tool it brings is named with this prefix (`mcp__<server>__`)."""
        ...

    def is_pending(self) -> bool:
        """Still connecting: its tools may not be registered yet."""
        ...

    async def wait(self, timeout: float) -> None:
        """Return once it is no longer pending, or after `timeout` seconds."""
        ...


@dataclass
class ToolRegistry:
    """Direct tools are sent with every request; deferred ones only through SearchExtraTools.

    The deferred part may change mid-session (a server connects late or goes away) without
    touching the frozen prompt or the tools list a request carries."""

    direct: dict[str, Tool] = field(default_factory=dict)
    deferred: dict[str, Tool] = field(default_factory=dict)
    sources: dict[str, ToolSource] = field(default_factory=dict)
    _specs: list[ToolSpec] | None = field(default=None, repr=False)

    def add(self, tool: Tool, *, deferred: bool | None = None) -> None:
        """Add a tool, deferred as its traits say unless `deferred` is given."""
        if deferred is None:
            deferred = tool.traits.deferred
        (self.deferred if deferred else self.direct)[tool.name] = tool
        if not deferred:
            self._specs = None

    def remove(self, name: str) -> None:
        if self.direct.pop(name, None) is not None:
            self._specs = None
        self.deferred.pop(name, None)

    def add_source(self, source: ToolSource) -> None:
        self.sources[source.name] = source

    def get(self, name: str) -> Tool | None:
        return self.direct.get(name) or self.deferred.get(name)

    def traits(self, name: str) -> ToolTraits:
        """The traits of the tool of that name; plain ones for a tool not registered."""
        tool = self.get(name)
        return PLAIN if tool is None else tool.traits

    def all(self) -> list[Tool]:
        """Every registered tool, direct first."""
        return [*self.direct.values(), *self.deferred.values()]

    def pending_sources(self, name: str | None = None) -> list[ToolSource]:
        """Sources still connecting; with `name`, only the one whose prefix it carries."""
        return [
            s
            for s in self.sources.values()
            if s.is_pending() and (name is None or name.startswith(s.tool_prefix))
        ]

    def specs(self) -> list[ToolSpec]:
        """Schemas of the direct tools; built once, since every request carries them."""
        if self._specs is None:
            self._specs = [t.spec() for t in self.direct.values()]
        return list(self._specs)
