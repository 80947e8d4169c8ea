"""Which widgets show each conversation item (imported when the first items are shown, so the
empty shell draws without the message widgets and their Markdown renderer)."""

from __future__ import annotations

from textual.widget import Widget

from peri_cli.tui.items import (
    AssistantItem,
    Item,
    NoticeItem,
    SeparatorItem,
    SummaryItem,
    ToolItem,
    UserItem,
)
from peri_cli.tui.tool_text import NO_LOOK, ToolLook
from peri_cli.tui.widgets.agent_card import AgentCard
from peri_cli.tui.widgets.assistant_message import AssistantMessage
from peri_cli.tui.widgets.folded_text import FoldedText
from peri_cli.tui.widgets.notice import NoticeLine
from peri_cli.tui.widgets.separator import Separator
from peri_cli.tui.widgets.tool_call import ToolCallView
from peri_cli.tui.widgets.user_message import UserMessage


def widgets_for(item: Item, look: ToolLook = NO_LOOK) -> list[Widget]:
    match item:
        case UserItem(text=text):
            return [UserMessage(text)]
        case AssistantItem(text=text, thinking=thinking):
            out: list[Widget] = []
            if thinking.strip():
                out.append(FoldedText("Thinking", thinking, classes="-thinking"))
            if text.strip():
                out.append(AssistantMessage(text))
            return out
        case ToolItem():
            view = (
                AgentCard(item.id, item.input, look=look)  # its child's card
                if item.name == "Agent"
                else ToolCallView(item.id, item.name, item.input, look=look)
            )
            if item.output is not None:
                view.set_result(item.output, item.is_error)
            else:
                view.set_state("cancelled")
            return [view]
        case SeparatorItem():
            return [
                Separator(
                    item.strategy,
                    item.tokens_before,
                    item.tokens_after,
                    item.affected,
                    item.detail,
                    summary=item.summary,
                )
            ]
        case SummaryItem(title=title, text=text):
            return [FoldedText(title, text)]
        case NoticeItem(text=text, level=level):
            return [NoticeLine(text, level)]
    return []
