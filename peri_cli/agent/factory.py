"""The agent factory: builds an agent for a session from a config. The entry point fills it in
with the provider and the tools; the core uses it for SubAgents from inside a tool."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from peri_cli.agent.loop import Agent, CompactHook
from peri_cli.base.childenv import child_env
from peri_cli.base.ownership import WriteOwners
from peri_cli.base.provider import Provider
from peri_cli.base.tool import CommandSandbox, FilePort, ToolContext, ToolRegistry
from peri_cli.context.contributions import ContributionChain, default_chain
from peri_cli.context.tokens import TokenCounter
from peri_cli.extensions.hookpoints import Hooks
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.session.checkpoints import Checkpointer
from peri_cli.session.store import Session


@dataclass(frozen=True)
class AgentConfig:
    """What differs between the agents of one run: the main one and each SubAgent."""

    model: str
    policy: PermissionPolicy
    max_turns: int | None = None
    tools: ToolRegistry | None = None  # None: a fresh registry from the factory
    chain: ContributionChain | None = None  # None: the default middleware chain
    agent_id: str | None = None  # None for the main agent
    label: str | None = None  # a SubAgent's name on its permission requests
    owners: WriteOwners | None = None  # shared with the parent, so one writer per file holds


@dataclass
class AgentFactory:
    provider: Provider
    workspace: Path
    make_tools: Callable[[], ToolRegistry]
    make_compactor: Callable[[], CompactHook | None] = lambda: None
    make_chain: Callable[[], ContributionChain] = default_chain
    env: Mapping[str, str] = field(default_factory=lambda: child_env(os.environ))
    counter: TokenCounter | None = None
    max_tokens: int = 8192
    retry_max_wait: float = 60.0
    hooks: Hooks | None = None  # the session's command hooks; SubAgents run them too
    # Files kept before writes, recorded in the main session (its SubAgents' writes too).
    checkpoints: Checkpointer | None = None
    files: FilePort | None = None  # Read, Edit and Write through a program instead of the disk
    sandbox: CommandSandbox | None = None  # Bash and Grep's helper run in it (None: no sandbox)

    def build(self, session: Session, config: AgentConfig) -> Agent:
        ctx = ToolContext(
            workspace=self.workspace,
            session_dir=session.dir,
            env=self.env,
            agent_id=config.agent_id,
            owners=config.owners or WriteOwners(),
            checkpoints=self.checkpoints,
            read_denied=config.policy.read_denied,
            grant=functools.partial(config.policy.grant_for_turn, agent=config.agent_id),
            files=self.files,
            sandbox=self.sandbox,
        )
        agent = Agent(
            session=session,
            provider=self.provider,
            model=config.model,
            tools=config.tools if config.tools is not None else self.make_tools(),
            policy=config.policy,
            chain=config.chain if config.chain is not None else self.make_chain(),
            compactor=self.make_compactor(),
            max_turns=config.max_turns,
            max_tokens=self.max_tokens,
            tool_ctx=ctx,
            counter=self.counter,
        )
        agent.label = config.label
        agent.retry_max_wait = self.retry_max_wait
        agent.hooks = self.hooks
        if self.hooks is not None and config.agent_id is None:  # the main agent's inbox
            self.hooks.background.inbox = agent.inbox  # where async hooks' output waits
        return agent
