"""What compaction needs of the agent it compacts for, and no more: the loop's Agent satisfies it
without compaction importing the loop."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from peri_cli.base.messages import Message
    from peri_cli.base.provider import ModelRequest, Provider
    from peri_cli.base.tool import ToolContext
    from peri_cli.extensions.hookpoints import Hooks
    from peri_cli.permissions.policy import PermissionPolicy
    from peri_cli.session.store import Session


class CompactionContext(Protocol):
    """What compaction needs of the agent it compacts for, and no more."""

    @property
    def session(self) -> Session: ...

    @property
    def model(self) -> str: ...

    @property
    def provider(self) -> Provider: ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def retry_max_wait(self) -> float: ...

    @property
    def tool_ctx(self) -> ToolContext: ...

    @property
    def policy(self) -> PermissionPolicy: ...  # its mode goes into the working state

    @property
    def hooks(self) -> Hooks | None: ...  # PreCompact and SessionStart("compact") hooks

    @property
    def inbox(self) -> list[str]: ...  # where a SessionStart hook's context waits

    def view(self) -> list[Message]: ...

    def build_request(self, *, tools: bool = True) -> ModelRequest: ...
