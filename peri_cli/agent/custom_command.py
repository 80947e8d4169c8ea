"""A custom command put to use (`/name args`, in the TUI and headless): its body read again and
expanded, its `` !`cmd` `` lines run as Bash calls through the permission path with its
`allowed-tools` granted (a project command's only in a trusted workspace), a denied one put in
as `[not run: why]`; its `@path`s attached (a project command's inside the workspace only, the
user's own asked about as Read asks); then the turn, on the command's model when it names one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from peri_cli.agent.attachments import AttachContext, Attachments, attach, locate, mentions
from peri_cli.agent.command_calls import CallOutcome, run_calls
from peri_cli.base.events import Event, Notice, TurnEnded
from peri_cli.base.messages import ImagePart, TextPart
from peri_cli.base.model_alias import resolve_model_alias
from peri_cli.base.safe_read import is_inside
from peri_cli.base.textsafe import visible
from peri_cli.extensions.custom_commands.catalog import CommandFileError, CustomCommand
from peri_cli.extensions.custom_commands.expansion import Expanded, expand_command

if TYPE_CHECKING:
    from peri_cli.agent.loop import Agent

MAX_BANG_LINES = 20  # `!` lines run per command; the rest are not run (and say so)
MAX_BANG_OUTPUT = 100_000  # characters of all its lines' outputs together (each within Bash's)
CUT_NOTE = f"at most {MAX_BANG_OUTPUT} characters in all"


def command_turn(
    agent: Agent,
    command: CustomCommand,
    arguments: str,
    *,
    workspace: Path,
    provider: str,
    images: dict[int, ImagePart] | None = None,
) -> AsyncIterator[Event]:
    """The events of `/name arguments`, ending with the turn's own (a file that cannot be read
    now ends it at once, with the reason). `provider`: whose model a `model:` alias names."""
    run = CommandRun(agent, command, workspace, provider, images or {})
    return run.events(arguments)


@dataclass
class CommandRun:
    agent: Agent
    command: CustomCommand
    workspace: Path
    provider: str
    images: dict[int, ImagePart] = field(default_factory=dict)

    async def events(self, arguments: str) -> AsyncIterator[Event]:
        agent, command = self.agent, self.command
        agent.last_interruption = None  # (a stop before the turn begins has nothing to report)
        try:
            body = command.load_body()
        except CommandFileError as e:
            yield TurnEnded("error", visible(str(e)))
            return
        agent_id = agent.tool_ctx.agent_id
        agent.policy.grant_for_turn(command.allowed_tools, command.scope == "project", agent_id)
        model = agent.model
        try:
            if command.model:
                agent.model, note = resolve_model_alias(command.model, self.provider, model)
                if note:
                    yield Notice(f"/{command.name}: {note}", "warning")
            expanded = expand_command(
                body, arguments, directory=command.path.parent, variables=command.source.variables
            )
            outputs: list[str] = []
            async for event in self._bang_lines(expanded, outputs):
                yield event
            found = Attachments()
            async for event in self._attachments(expanded, found):
                yield event
            async for event in agent.run(expanded.assemble(outputs), found.entry()):
                yield event
        finally:
            agent.model = model
            agent.policy.end_turn(agent_id)  # (the turn ends it too; not one that never began)

    async def _bang_lines(self, expanded: Expanded, outputs: list[str]) -> AsyncIterator[Event]:
        """Each line's output (what Bash gives the model, within its limits, and all of them
        within MAX_BANG_OUTPUT), or why not."""
        lines = expanded.commands()
        if not lines:
            return
        if self.agent.tools.get("Bash") is None:
            outputs += ["[not run: this session has no Bash tool]"] * len(lines)
            return
        outcomes: list[CallOutcome] = []
        calls = [("Bash", {"command": line}) for line in lines[:MAX_BANG_LINES]]
        async for event in run_calls(self.agent, calls, outcomes):
            yield event
        room = MAX_BANG_OUTPUT
        for outcome in outcomes:
            text = outcome.text.rstrip("\n") if outcome.ran else f"[not run: {outcome.why}]"
            if len(text) > room:
                text = text[: max(room, 0)] + f"\n[cut: a command's ! lines give {CUT_NOTE}]"
            room -= len(text)
            outputs.append(text)
        more = len(lines) - len(outcomes)
        outputs += [f"[not run: a command runs at most {MAX_BANG_LINES} ! lines]"] * more

    async def _attachments(self, expanded: Expanded, out: Attachments) -> AsyncIterator[Event]:
        """The `@path`s of the command's text (an output's attach nothing), attached as a typed
        prompt's are; one outside the workspace only for the user's own command, and only as
        the Read tool may read it (asking first)."""
        text, workspace = expanded.text_only(), self.workspace
        inside: list[str] = []
        outside: list[tuple[Path, str]] = []
        for raw in mentions(text):
            found = locate(raw, workspace)
            if found and self.command.scope != "project" and not is_inside(found[0], workspace):
                outside.append(found)
            else:
                inside.append(raw)
        if inside or (self.images and "[image #" in text):
            ctx = AttachContext.of(self.agent, workspace)
            typed = await attach(text, ctx, self.images, only=inside)
            out.parts, out.attached, out.skipped = typed.parts, typed.attached, typed.skipped
        async for event in self._read_outside(outside, out):
            yield event
        if out.attached:
            yield Notice("Attached " + ", ".join(f"@{p}" for p in out.attached), "info")
        for line in out.skipped:
            yield Notice(line, "warning")

    async def _read_outside(
        self, outside: list[tuple[Path, str]], out: Attachments
    ) -> AsyncIterator[Event]:
        if not outside:
            return
        if self.agent.tools.get("Read") is None:
            off = "not attached, the Read tool is turned off"
            out.skipped += [f"@{visible(written)}: {off}" for _, written in outside]
            return
        outcomes: list[CallOutcome] = []
        reads = [("Read", {"file_path": str(path)}) for path, _ in outside]
        async for event in run_calls(self.agent, reads, outcomes):
            yield event
        for (_, written), outcome in zip(outside, outcomes, strict=True):
            shown = visible(written)
            if outcome.ran and not outcome.is_error:
                out.parts.append(TextPart(text=f"[Attached file @{shown}, as Read shows it]"))
                out.parts.extend(outcome.content)
                out.attached.append(shown)
            else:
                why = outcome.why or visible((outcome.text.splitlines() or ["it failed"])[0])
                out.skipped.append(f"@{shown}: not attached, {why}")
