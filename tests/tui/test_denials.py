"""Issue 10, plan mode: every tool denied in every mode reaches the model as an error result and
the turn goes on (a denied Edit/Write in plan mode once ended the turn with a MountError)."""

from __future__ import annotations

from pathlib import Path

import pytest

from peri_cli.base.messages import ToolResultPart
from peri_cli.base.modes import MODES, Mode
from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
from peri_cli.tui.app import PeriApp
from peri_cli.tui.widgets.assistant_message import AssistantMessage
from peri_cli.tui.widgets.tool_call import ToolCallView

from .harness import FIXED_NOW, make_runtime, send, until
from .test_turns import notices

CALLS = {
    "Read": {"file_path": "a.py"},
    "Glob": {"pattern": "*.py"},
    "Grep": {"pattern": "add"},
    "Write": {"file_path": "new.py", "content": "x = 1\n"},
    "Edit": {"file_path": "a.py", "old_string": "a - b", "new_string": "a + b"},
    "Bash": {"command": "echo ran > ran.txt"},
}
WRITERS = {"Write", "Edit", "Bash"}
# what each mode denies (by policy or, where it asks, by the user pressing 3)
DENIED: dict[Mode, set[str]] = {
    "default": WRITERS,
    "accept-edits": {"Bash"},
    "plan": WRITERS,
    "bypass": set(),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("together", [True, False], ids=["one-message", "one-by-one"])
async def test_plan_mode_denials_reach_the_model_in_every_mode(
    tmp_path: Path, mode: Mode, together: bool
) -> None:
    calls = [ScriptedCall(name, dict(args), id=f"id-{name}") for name, args in CALLS.items()]
    replies = (
        [ScriptedReply(text="All six.", tool_calls=calls)]
        if together
        else [ScriptedReply(text=f"Now {c.name}.", tool_calls=[c]) for c in calls]
    )
    runtime = make_runtime(tmp_path, [*replies, ScriptedReply(text="Carrying on.")], mode=mode)
    (runtime.workspace / "a.py").write_text("def add(a, b):\n    return a - b\n")
    provider = runtime._provider
    assert isinstance(provider, ScriptedProvider)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "try every tool", wait=False)

        def settled() -> bool:
            if app.approvals.pending is not None:
                app.approvals.pending.action_answer("deny")
            return not app.busy

        await until(pilot, settled, what="the turn to end")
        assert app.query(AssistantMessage).last().text == "Carrying on."  # the turn went on
        assert "Stopped" not in notices(app) and "Error" not in notices(app)
        results = {
            part.tool_use_id: part
            for request in provider.requests
            for message in request.messages
            for part in message.content
            if isinstance(part, ToolResultPart)
        }
        assert set(results) == {f"id-{name}" for name in CALLS}
        for name in CALLS:
            result = results[f"id-{name}"]
            denied = name in DENIED[mode]
            assert result.is_error == denied, (name, result.text)
            assert ("Permission denied" in result.text) == denied, (name, result.text)
        views = {v.name_: v for v in app.query(ToolCallView)}
        assert {n for n, v in views.items() if v.state == "error"} == DENIED[mode]
        assert (runtime.workspace / "ran.txt").exists() == ("Bash" not in DENIED[mode])
    runtime.close()
