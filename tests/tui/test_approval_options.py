"""Issue 14, the TUI approval: allow once; allow the suggested rules for this session; always allow
them in this project (`.peri/settings.local.json`); deny; deny with a note the model reads. Options
without rules to offer are hidden; the question and every choice stay on screen at 60x20; rule
text is never markup."""

from __future__ import annotations

import json
from pathlib import Path

from peri_cli.base.messages import ToolResultPart
from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
from peri_cli.tui.app import PeriApp
from peri_cli.tui.widgets.permission_prompt import ApprovalRecord, PermissionPrompt
from peri_cli.tui.widgets.tool_call import ToolCallView

from .harness import FIXED_NOW, make_runtime, screen_text, send, until


def bash(*commands: str) -> ScriptedReply:
    return ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": c}) for c in commands])


async def asked(pilot: object, app: PeriApp) -> PermissionPrompt:
    """Wait for an approval to be pending and focused."""
    await until(
        pilot,
        lambda: app.approvals.pending is not None and app.focused is app.approvals.pending,
        what="the approval",
    )
    prompt = app.approvals.pending
    assert prompt is not None
    await pilot.pause()  # type: ignore[attr-defined]
    return prompt


def results(provider: ScriptedProvider) -> list[ToolResultPart]:
    last = provider.requests[-1].messages[-1]
    return [p for p in last.content if isinstance(p, ToolResultPart)]


async def test_the_five_choices_name_the_rules_and_answer_by_number_or_letter(
    tmp_path: Path,
) -> None:
    runtime = make_runtime(tmp_path, [bash("git diff HEAD"), ScriptedReply(text="ok")])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "diff", wait=False)
        prompt = await asked(pilot, app)
        screen = screen_text(app)
        assert prompt.suggestions == ["Bash(git diff:*)"]
        assert "Allow Bash? 1–5" in screen
        for row in (
            "1. y  Allow once",
            "2. a  Allow for this session (Bash(git diff:*))",
            "3. p  Always allow the same rules in this project",
            "4. n  Deny",
            "5.    Deny with a note to the model…",
        ):
            assert row in screen, row
        await pilot.press("x", "q")  # stray keys neither answer nor leave
        assert not prompt.answered and app.focused is prompt
        await pilot.press("4")
        await until(pilot, lambda: not app.busy)
        assert prompt.answer == "deny"
    runtime.close()


async def test_without_rules_to_offer_only_once_deny_and_the_note_are_offered(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "elsewhere.txt"
    call = ScriptedCall("Write", {"file_path": str(outside), "content": "x\n"})
    runtime = make_runtime(tmp_path, [ScriptedReply(tool_calls=[call]), ScriptedReply(text="ok")])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "write outside", wait=False)
        prompt = await asked(pilot, app)
        screen = screen_text(app)
        assert prompt.suggestions == []
        assert "Allow Write? 1–3" in screen
        assert "this session" not in screen and "this project" not in screen
        await pilot.press("a", "p")  # letters of choices not offered do nothing
        assert not prompt.answered
        await pilot.press("2")  # the second choice here is Deny
        await until(pilot, lambda: not app.busy)
        assert prompt.answer == "deny" and not outside.exists()
    runtime.close()


async def test_allow_the_prefix_for_the_session_stops_asking_for_it_only(tmp_path: Path) -> None:
    """`Bash(git diff:*)` for the session: `git diff HEAD~1` runs without asking afterwards;
    `git difftool` still asks."""
    replies = [
        bash("git diff HEAD"),
        bash("git diff HEAD~1"),
        bash("git difftool"),
        ScriptedReply(text="done"),
    ]
    runtime = make_runtime(tmp_path, replies)
    provider = runtime._provider
    assert isinstance(provider, ScriptedProvider)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "diff", wait=False)
        first = await asked(pilot, app)
        await pilot.press("a")
        await until(
            pilot,
            lambda: app.approvals.pending is not None and app.approvals.pending is not first,
            what="the next approval",
        )
        second = app.approvals.pending
        assert second is not None and second.tool_input["command"] == "git difftool"
        await pilot.press("n")
        await until(pilot, lambda: not app.busy)
        commands = [v.tool_input["command"] for v in app.query(ToolCallView) if v.tool_input]
        assert commands == ["git diff HEAD", "git diff HEAD~1", "git difftool"]
        assert [r.answer for r in app.query(ApprovalRecord)] == ["allow_session", "deny"]
    assert len(provider.requests) == 4  # every call got its result, the first two ran
    rules = [(r.behavior, r.text, str(r.source)) for r in runtime.agent.policy.rules.rules]
    assert ("allow", "Bash(git diff:*)", "this session") in rules
    assert not (runtime.workspace / ".peri" / "settings.local.json").exists()
    runtime.close()


def _choice_rows(screen: str) -> list[str]:
    """The approval's rows from its first choice to its last, without the border."""
    rows = [line.strip().strip("│").rstrip() for line in screen.splitlines()]
    first = next(i for i, r in enumerate(rows) if "1. y  Allow once" in r)
    last = next(i for i, r in enumerate(rows) if "5.    Deny with a note" in r)
    return rows[first : last + 1]


async def test_issue40_the_session_label_names_every_rule_it_keeps_wrapped_at_60_columns(
    tmp_path: Path,
) -> None:
    """`echo hi; cat notes.txt` keeps `Bash(echo:*)` and `Bash(cat:*)`: the label says both
    (a later `cat other.txt` runs unasked because it said so); a long list wraps under the
    label, each rule whole, and the message box stays on screen at 60x20."""
    long = "echo hi; cat notes.txt && git diff HEAD && npm run test -- -x && pytest -q && ls -la"
    replies = [
        bash(long),
        bash("echo hi; cat notes.txt"),
        bash("cat other.txt"),
        bash("wc -l notes.txt"),
        ScriptedReply(text="done"),
    ]
    runtime = make_runtime(tmp_path, replies)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await send(pilot, "look", wait=False)
        first = await asked(pilot, app)
        await pilot.pause()
        screen = screen_text(app)
        rows = _choice_rows(screen)
        assert "…" not in "".join(rows[:-1])  # (the last is "Deny with a note…")
        joined = " ".join(r.strip() for r in rows)
        expected = (
            "Allow for this session (Bash(echo:*), Bash(cat:*), Bash(git diff:*), "
            "Bash(npm run test:*), Bash(pytest:*), Bash(ls:*))"
        )
        assert expected in joined
        label_rows = rows[1 : rows.index(next(r for r in rows if "3. p" in r))]
        assert len(label_rows) > 1  # wrapped ...
        assert all(r.startswith(" " * 9) for r in label_rows[1:])  # ... under the label
        assert "Bash(npm run test:*)" in "\n".join(label_rows)  # never broken inside a rule
        assert "Always allow the same rules in this project" in screen
        assert "Message Peri" in screen  # the message box keeps its place
        await pilot.press("n")
        second = await asked_again(pilot, app, first)
        assert "2. a  Allow for this session (Bash(echo:*), Bash(cat:*))" in " ".join(
            r.strip() for r in _choice_rows(screen_text(app))
        )
        await pilot.press("a")
        last = await asked_again(pilot, app, second)
        assert last.tool_input["command"] == "wc -l notes.txt"  # `cat other.txt` was not asked
        await pilot.press("n")
        await until(pilot, lambda: not app.busy)
    kept = [r.text for r in runtime.agent.policy.rules.rules if str(r.source) == "this session"]
    assert kept == ["Bash(echo:*)", "Bash(cat:*)"]
    runtime.close()


async def asked_again(pilot: object, app: PeriApp, before: PermissionPrompt) -> PermissionPrompt:
    await until(
        pilot,
        lambda: app.approvals.pending is not None and app.approvals.pending is not before,
        what="the next approval",
    )
    return await asked(pilot, app)


async def test_always_allow_in_this_project_writes_the_local_settings(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [bash("git diff HEAD"), ScriptedReply(text="ok")])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "diff", wait=False)
        await asked(pilot, app)
        await pilot.press("p")
        await until(pilot, lambda: not app.busy)
        assert [r.answer for r in app.query(ApprovalRecord)] == ["allow_project"]
        assert "always allowed in this project" in screen_text(app)
    saved = json.loads((runtime.workspace / ".peri" / "settings.local.json").read_text())
    assert saved["permissions"]["allow"] == ["Bash(git diff:*)"]
    runtime.close()


async def test_deny_with_a_note_tells_the_model(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [bash("grep -r TODO ."), ScriptedReply(text="ok")])
    provider = runtime._provider
    assert isinstance(provider, ScriptedProvider)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await send(pilot, "find todos", wait=False)
        prompt = await asked(pilot, app)
        await pilot.press("5")
        await until(pilot, lambda: app.focused is prompt.note_input, what="the note input")
        assert "Allow Bash?" in screen_text(app)  # the question stays on screen
        await pilot.press(*"use the Grep tool instead, n")  # letters are the note's here
        await pilot.pause()
        assert "use the Grep tool instead" in screen_text(app)  # what is typed shows
        await pilot.press("enter")
        await until(pilot, lambda: not app.busy)
        assert prompt.answer == "deny" and prompt.note == "use the Grep tool instead, n"
        record = app.query_one(ApprovalRecord)
        assert "denied, with a note: use the Grep tool instead" in str(record.render())
    (result,) = results(provider)
    assert result.is_error
    assert "The user denied Bash and said: use the Grep tool instead, n" in result.text
    runtime.close()


async def test_esc_in_the_note_denies_without_one(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [bash("rm -rf build"), ScriptedReply(text="ok")])
    provider = runtime._provider
    assert isinstance(provider, ScriptedProvider)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "clean", wait=False)
        prompt = await asked(pilot, app)
        await pilot.press("down", "down", "down", "down", "enter")  # the fifth: a note
        await until(pilot, lambda: app.focused is prompt.note_input, what="the note input")
        await pilot.press(*"nope", "escape")
        await until(pilot, lambda: not app.busy)
        assert prompt.answer == "deny" and prompt.note == ""
        assert app.focused is app.prompt_area.input
    (result,) = results(provider)
    assert "Permission denied for Bash" in result.text
    runtime.close()


async def test_long_and_markup_like_rules_at_60x20(tmp_path: Path) -> None:
    """Rules derived from the model's command are shown as written (never markup) and whole:
    a choice's row wraps; the question stays on screen."""
    command = "'[b]x[/b]' --go && '[@click=app.quit]y[/]' run && cat notes-with-a-long-name.txt"
    runtime = make_runtime(tmp_path, [bash(command), ScriptedReply(text="ok")])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await send(pilot, "go", wait=False)
        prompt = await asked(pilot, app)
        assert len(prompt.suggestions) == 3
        # the rules a choice adds are all on screen at once: its row wraps, never cut
        screen = screen_text(app)
        assert "Allow Bash? 1–5" in screen and "5.    Deny with a note" in screen
        flat = "".join(screen.replace("│", "").split())
        rules = "Bash('[b]x[/b]':*), Bash('[@click=app.quit]y[/]':*), Bash(cat:*)"
        assert "2.aAllowforthissession(" + "".join(rules.split()) + ")" in flat, screen
        assert "3.pAlwaysallowthesamerulesinthisproject" in flat, screen
        await pilot.press("n")
        await until(pilot, lambda: not app.busy)
        assert app.is_running
    runtime.close()


async def test_an_approval_never_takes_keys_typed_for_the_prompt(tmp_path: Path) -> None:
    """The user is writing their next message when the question comes: their letters stay in
    the prompt (an `a` would allow rules for the session); Ctrl+↑ goes to the approval."""
    touch = [ScriptedCall("Bash", {"command": "touch x"})]
    slow = ScriptedReply(text="Making it now.", tool_calls=touch, delay=0.2)  # (per word)
    runtime = make_runtime(tmp_path, [slow, ScriptedReply(text="ok")], mode="default")
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "make x", wait=False)
        await pilot.press(*"ple")  # typing ahead while the model answers
        await until(pilot, lambda: app.approvals.pending is not None, what="the approval")
        prompt = app.approvals.pending
        assert prompt is not None
        await pilot.press(*"ase")
        assert app.prompt_area.text == "please" and not prompt.answered
        assert app.focused is app.prompt_area.input
        toasts = [n.message for n in app._notifications]
        assert any("Ctrl+↑ answers" in t for t in toasts), toasts
        await pilot.press("ctrl+up")
        assert app.focused is prompt
        await pilot.press("y")
        await until(pilot, lambda: not app.busy)
        assert prompt.answer == "allow" and app.prompt_area.text == "please"
    assert (runtime.workspace / "x").exists()
