"""The public door: `query`, `PeriClient`, `PeriOptions` and typed events (CONTRACT.md §8).

The composition root behind it (`runtime`, `composed`) fills the agent factory with providers,
tools and MCP; faces (`tui`, `headless`, `acp`) import this door, never the adapters. Importing it
loads no Textual and no provider SDK (those come with the first request)."""

from peri_cli.base.modes import MODES
from peri_cli.base.questions import (
    KEEP_PLANNING,
    PLAN_MODES,
    Answers,
    Asking,
    Question,
    answered_input,
    form_answers,
)
from peri_cli.base.tool import EditorKind, FilePort, ToolTraits
from peri_cli.permissions.remembering import keeps_label
from peri_cli.sdk.agentdefs import AgentDefinition
from peri_cli.sdk.blocks import (
    ContentBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from peri_cli.sdk.client import PeriClient, query
from peri_cli.sdk.errors import OptionError, PeriError
from peri_cli.sdk.events import (
    AssistantEvent,
    CompactEvent,
    Event,
    ResultEvent,
    SubagentEvent,
    SystemEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    TodoEvent,
    ToolProgressEvent,
    ToolResultEvent,
    ToolUseEvent,
    UserEvent,
    parse_event,
)
from peri_cli.sdk.hookmatchers import HookCallback, HookMatcher
from peri_cli.sdk.mcptools import SdkMcpTool, create_sdk_mcp_server, tool
from peri_cli.sdk.options import (
    Allow,
    CanUseTool,
    Deny,
    PeriOptions,
    PermissionContext,
    PermissionMode,
    PermissionUpdate,
)

__all__ = [
    "KEEP_PLANNING",
    "MODES",
    "PLAN_MODES",
    "AgentDefinition",
    "Allow",
    "Answers",
    "Asking",
    "AssistantEvent",
    "CanUseTool",
    "CompactEvent",
    "ContentBlock",
    "Deny",
    "EditorKind",
    "Event",
    "FilePort",
    "HookCallback",
    "HookMatcher",
    "OptionError",
    "PeriClient",
    "PeriError",
    "PeriOptions",
    "PermissionContext",
    "PermissionMode",
    "PermissionUpdate",
    "Question",
    "ResultEvent",
    "SdkMcpTool",
    "SubagentEvent",
    "SystemEvent",
    "TextBlock",
    "TextDeltaEvent",
    "ThinkingBlock",
    "ThinkingDeltaEvent",
    "TodoEvent",
    "ToolProgressEvent",
    "ToolResultBlock",
    "ToolResultEvent",
    "ToolTraits",
    "ToolUseBlock",
    "ToolUseEvent",
    "UserEvent",
    "answered_input",
    "create_sdk_mcp_server",
    "form_answers",
    "keeps_label",
    "parse_event",
    "query",
    "tool",
]
