"""The runtime's prompt side: what a new session's frozen system prompt is made of (the base
sections, the guides, the environment, the skill listing, or a program's own `system_prompt`),
and the SubAgent types its agent offers (files, plugins, and a program's `agents`).

The prompt is built once, for a new session, and stored in its header; a resumed session keeps
the one it was created with (nothing here runs for it but `_agent_types`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from peri_cli.agent.workspace import workspace_guides
from peri_cli.context.meta import resolve as resolve_meta
from peri_cli.context.snapshot import SnapshotInputs, build_snapshot, detect_environment
from peri_cli.context.todos import TODO_TOOL
from peri_cli.extensions.agent_types import AgentCatalog, AgentType, discover_agent_types
from peri_cli.extensions.skills.catalog import SkillCatalog
from peri_cli.extensions.skills.listing import skill_listing
from peri_cli.sdk.mcpside import display_path
from peri_cli.sdk.plugins import folders
from peri_cli.session.transcript import Snapshot

if TYPE_CHECKING:
    from peri_cli.base.settings import LoadedSettings, Settings
    from peri_cli.extensions.plugins.active import ActivePlugins
    from peri_cli.permissions.trust import TrustState


class PromptSide:
    """Mixed into `composed.Runtime`: a new session's snapshot and the agent types."""

    if TYPE_CHECKING:
        workspace: Path
        peri_home: Path
        env: Mapping[str, str]
        settings: Settings
        loaded: LoadedSettings | None
        trust: TrustState | None
        warnings: list[str]
        plugins: ActivePlugins
        skills: SkillCatalog
        loaded_skills: SkillCatalog | None
        _types_read: tuple[bool, AgentCatalog] | None
        builtin_names: frozenset[str] | None
        append_system: str | None
        system_prompt: str | None
        program_agents: tuple[AgentType, ...]

        @property
        def trusted(self) -> bool: ...

        @property
        def context_window(self) -> int: ...

        def style_inputs(self) -> dict[str, Any]: ...

        def capability_tools(self) -> dict[str, list[str]]: ...

    def new_snapshot(self) -> Snapshot:
        home = Path(self.env.get("HOME", str(Path.home())))
        guides = self.trust.take_guides() if self.trust is not None else None
        if guides is None:
            guides = workspace_guides(
                self.workspace, home, self.loaded or self.settings, trusted=self.trusted
            )
        platform, is_git = detect_environment(self.workspace)
        meta = resolve_meta(
            self.loaded or self.settings, workspace=self.workspace, peri_home=self.peri_home
        )
        self.warnings.extend(meta.warnings)
        state = meta.state
        skills = self._all_skills() if state.enabled("skills") else SkillCatalog()
        listing = skill_listing(skills, self.context_window)
        types = self._agent_types(home, state.builtin_subagents)
        self._types_read = (state.builtin_subagents, types)  # for this session's agent
        has_subagents = state.enabled("subagents") and bool(types.types) and self._offers("Agent")
        inputs = SnapshotInputs(
            workspace=self.workspace,
            today=date.today(),
            platform=platform,
            is_git=is_git,
            guide_text=guides.text,
            guide_files=[display_path(p, self.workspace) for p in guides.files],
            guide_warnings=list(guides.warnings),
            skill_listing=listing.text,
            skills=list(listing.shown),
            meta=state,
            overrides=meta.texts,
            has_subagents=has_subagents,
            has_todos=self.settings.todoTool and self._offers(TODO_TOOL),
            offered=self._offered_capabilities(),
            **self.style_inputs(),
        )
        snapshot = build_snapshot(inputs)
        if self.system_prompt is not None:
            return _replaced(snapshot, [self.system_prompt, listing.text, self.append_system])
        if self.append_system:
            extra = f"{snapshot.system}\n\n{self.append_system}"
            snapshot = snapshot.model_copy(update={"system": extra})
        return snapshot

    def _offers(self, tool: str) -> bool:
        """Whether the built-in tool is among those the program left (`PeriOptions.tools`)."""
        return self.builtin_names is None or tool in self.builtin_names

    def _offered_capabilities(self) -> frozenset[str] | None:
        """The capabilities some built-in tool left by `PeriOptions.tools` brings (None: all)."""
        if self.builtin_names is None:
            return None
        found = self.capability_tools().items()
        return frozenset(c for c, names in found if self.builtin_names & set(names))

    def _agent_types(self, home: Path, builtins: bool) -> AgentCatalog:
        """The agent types: as the snapshot just read them, or read now (a resumed session).
        A program's `agents` come last: on a name clash its definition wins over a file's."""
        read, self._types_read = self._types_read, None
        if read is not None and read[0] == builtins:
            return read[1]
        plugins = folders(self.plugins, "agents")
        catalog = discover_agent_types(self.workspace, home, builtins=builtins, plugins=plugins)
        catalog.types.update({kind.name: kind for kind in self.program_agents})
        return catalog

    def _all_skills(self) -> SkillCatalog:
        if self.loaded_skills is None:
            self.loaded_skills = self.skills
        return self.loaded_skills


def _replaced(snapshot: Snapshot, parts: list[str | None]) -> Snapshot:
    """A program's own prompt instead of everything Peri writes (the Claude Agent SDK's string
    `system_prompt`): no base sections, guides, environment or output style. The skill listing
    stays when there are skills (the Skill tool names them only through it), then the text of
    `append_system_prompt`."""
    system = "\n\n".join(t.strip() for t in parts if t and t.strip()) + "\n"
    return snapshot.model_copy(
        update={"system": system, "guide_files": [], "guide_warnings": [], "output_style": None}
    )
