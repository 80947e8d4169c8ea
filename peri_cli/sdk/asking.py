"""Where the TUI asks a person, a program's `can_use_tool` answers (none: denied, as headless).

`remember` keeps exactly the suggested rules (`context.suggestions`, all of them, as the TUI's
and the editor's labels name them) as the TUI's answers keep them: "session" adds them to the
session's rules, "project" also writes them to `.peri/settings.local.json` (the same call the
TUI's "always in this project" makes); a `Deny` keeps them as deny rules the same way."""

from __future__ import annotations

from typing import Any

from peri_cli.base.events import Notice, PermissionRequested
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.permissions.rule_syntax import RuleError, RuleSource, parse_rule
from peri_cli.permissions.rulefile import RuleFileError, add_rules
from peri_cli.sdk.options import Allow, CanUseTool, Deny, PermissionContext
from peri_cli.sdk.questions import answered, unanswered


class Asker:
    def __init__(
        self, can_use_tool: CanUseTool | None, policy: PermissionPolicy, session_id: str
    ) -> None:
        self.can_use_tool = can_use_tool
        self.policy = policy
        self.session_id = session_id
        self.notices: list[Notice] = []  # problems keeping a rule, for the caller to show

    async def answer(self, event: PermissionRequested) -> None:
        """Set the question's answer (a cancelled callback leaves it to the cancelled turn)."""
        if self.can_use_tool is None:
            if event.asking is not None:
                unanswered(event, event.asking)
            else:
                event.future.set_result("deny")
            return
        context = PermissionContext(
            session_id=self.session_id,
            tool_use_id=event.tool_use_id,
            suggested_rule=event.suggestions[0] if event.suggestions else None,
            suggestions=tuple(event.suggestions),
            reason=event.reason,
            agent=event.agent,
            asking=event.asking,
        )
        try:
            verdict = await self.can_use_tool(event.tool, dict(event.input), context)
        except Exception as e:  # a broken callback denies; the model is told why
            verdict = Deny(f"the permission callback failed: {type(e).__name__}: {e}")
        if event.future.done():
            return
        if event.asking is not None:
            good = isinstance(verdict, Allow | Deny)
            answered(event, event.asking, verdict if good else Deny(_not_an_answer(verdict)))
        elif isinstance(verdict, Allow):
            self._allow(event, verdict)
        else:
            self._deny(
                event, verdict if isinstance(verdict, Deny) else Deny(_not_an_answer(verdict))
            )

    def _allow(self, event: PermissionRequested, verdict: Allow) -> None:
        if verdict.updated_input is not None:
            event.updated_input = dict(verdict.updated_input)
        answer = {"session": "allow_session", "project": "allow_project"}.get(
            verdict.remember or "", "allow"
        )
        event.future.set_result(answer)  # type: ignore[arg-type]

    def _deny(self, event: PermissionRequested, verdict: Deny) -> None:
        event.deny_note = verdict.message  # empty: the standard denial text
        if verdict.remember is not None and event.suggestions:
            for text in event.suggestions:
                try:
                    self.policy.rules.add(parse_rule(text, "deny", RuleSource("session")))
                except RuleError:
                    continue
            if verdict.remember == "project":
                try:
                    add_rules(self.policy.workspace, event.suggestions, "deny")
                except (RuleFileError, OSError) as e:
                    self.notices.append(Notice(f"could not save the deny rule: {e}", "warning"))
        event.future.set_result("deny")


def _not_an_answer(value: Any) -> str:
    return f"the permission callback returned {type(value).__name__}, not Allow or Deny"
