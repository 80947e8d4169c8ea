"""Where a pending approval sits: it takes the keyboard unless the user is typing a message, it
takes the room the rest of the screen leaves, and when one is answered the next question (another
SubAgent's) gets the keys."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Footer

if TYPE_CHECKING:
    from peri_cli.base.events import PermissionRequested
    from peri_cli.tui.ports import AppPort
    from peri_cli.tui.widgets.permission_prompt import PermissionPrompt

MIN_CONVERSATION = 2  # rows of conversation an approval leaves in view


def offer(app: AppPort, prompt: PermissionPrompt) -> None:
    """A new approval takes the keyboard, unless the user is typing a message: a keystroke
    meant for the prompt must never answer it (`a` would allow a rule for the session)."""
    if app.approvals.pending is not prompt:
        return  # an earlier one waits first; this one gets the keys when its turn comes
    typing = app.focused is app.prompt_area.input and bool(app.prompt_area.text.strip())
    if not typing:
        prompt.focus()
        return
    from peri_cli.base.textsafe import visible

    who = f"{prompt.agent} asks" if prompt.agent else "Peri asks"
    app.notify(
        visible(f"{who} to use {prompt.tool}: Ctrl+↑ answers, Esc denies"),
        timeout=8,
        markup=False,
    )


async def answered(app: AppPort, prompt: PermissionPrompt) -> None:
    await app.approvals.close(prompt)  # (the bridge records the answer in its place)
    waiting = app.approvals.pending
    if waiting is None:
        app.prompt_area.input.focus()
    else:  # the next question (another SubAgent's) gets the keys now
        offer(app, waiting)
        app.call_after_refresh(app.fit_approval)


def fit(app: AppPort) -> None:
    """A pending approval takes the room the rest leaves, so its question stays on screen."""
    prompt = app.approvals.pending
    if prompt is None or not app.is_running:
        return
    others = sum(w.outer_size.height for w in (app.prompt_area, app.status) if w.display) + sum(
        1 for _ in app.query(Footer)
    )
    others += app.agent_strip.wanted_height  # (its size may not be laid out yet)
    prompt.fit(app.size.height - others - MIN_CONVERSATION - prompt.styles.margin.height)


def listen_network(app: AppPort, runtime: object) -> None:
    """The sandbox's questions about new domains come as `PermissionRequested` events ("Network")
    at any moment of a turn: each goes to the approval dock like a tool's. Its notes (an
    "always" that could not be saved, what the protected-path check found) become notices as
    they happen; a protected file it held back is asked about (`held_question`)."""
    hook = getattr(runtime, "ask_network_through", None)
    if callable(hook):
        hook(lambda event: app.run_worker(_ask_network(app, event), group="network"))
    if hasattr(runtime, "sandbox_noticer"):
        runtime.sandbox_noticer = lambda line: app.run_worker(
            _sandbox_notice(app, line), group="network"
        )


async def _sandbox_notice(app: AppPort, line: str) -> None:
    await app.notice(line, "warning")
    if app.runtime.held_back():
        from peri_cli.tui.screens.held_question import ask_held

        app.run_worker(ask_held(app, app.runtime), group="held")


async def _ask_network(app: AppPort, event: PermissionRequested) -> None:
    from peri_cli.tui.bridge import make_prompt

    if app.quitting:
        if not event.future.done():
            event.future.set_result("deny")  # nothing left to ask on
        return
    prompt = make_prompt(event, app.runtime.workspace)
    event.future.add_done_callback(lambda _f: _network_answered(app, event, prompt))
    await app.approvals.ask(prompt)
    app.offer_approval(prompt)


def _network_answered(app: AppPort, event: PermissionRequested, prompt: PermissionPrompt) -> None:
    """The answer leaves a line in the conversation, as a tool's approval does, mounted as the
    answer is given (so it stands before what the command did next); a question the gate stopped
    waiting for (its time ran out) steps aside too."""
    from peri_cli.tui.approval import network_domain, network_record
    from peri_cli.tui.widgets.permission_prompt import ApprovalRecord

    prompt.cancel()  # (a no-op once answered)
    if app.quitting:
        return
    answer = None if event.future.cancelled() else event.future.result()
    text = network_record(network_domain(event.tool, event.input) or "?", answer, event.keep_in)
    app.conversation.mount(ApprovalRecord(event.tool, answer, text=text))
