"""Issue 37 item 10 in the loop (scripted provider): a request the provider refused for what it
carried (400/413) is not sent again — the prompt, or the tool round, it added is left out of the
view by a `Refusal` entry that a resumed session honours too; a context-length 400 gets one
compaction and one retry; 401/403/404 and transient failures keep the prompt. Every failure
says what to do next."""

from __future__ import annotations

from pathlib import Path

import pytest

from peri_cli.agent.compaction.compactor import Compactor
from peri_cli.agent.compaction.config import CompactConfig
from peri_cli.agent.loop import Agent
from peri_cli.agent.refusals import FIX_THEN_SEND, SEND_AGAIN, TRY_LATER, kept_step
from peri_cli.base.events import Compacted, TurnEnded
from peri_cli.base.messages import ImagePart, Message, TextPart, user_text
from peri_cli.base.provider import ProviderError
from peri_cli.base.retry import too_long_a_wait
from peri_cli.context.projection import project
from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
from peri_cli.session.transcript import Interruption, MessageEntry, Refusal
from peri_cli.session.transcript_file import load
from tests.agent.test_loop import drive, make_agent
from tests.builders import counter

IMAGE_TOO_BIG = ProviderError(
    "Anthropic API error 400 invalid_request_error: messages.0.content.1.image.source.base64: "
    "image exceeds 5 MB maximum",
    status=400,
)
TOO_LARGE = ProviderError("Anthropic API error 413 request_too_large: too big", status=413)
TOO_LONG = ProviderError(
    "Anthropic API error 400 invalid_request_error: prompt is too long: 210000 tokens > 200000",
    status=400,
    too_long=True,
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def _texts(messages: list[Message]) -> list[str]:
    return [p.text for m in messages for p in m.content if isinstance(p, TextPart)]


def _image_entry() -> MessageEntry:
    image = ImagePart(media_type="image/png", data="aGVsbG8=")
    return MessageEntry.model_validate(
        {"message": Message(role="user", content=[image]), "origin": "attachment"}
    )


def _ended(events: list[object]) -> TurnEnded:
    last = events[-1]
    assert isinstance(last, TurnEnded)
    return last


@pytest.mark.parametrize("error", [IMAGE_TOO_BIG, TOO_LARGE], ids=["400", "413"])
async def test_a_refused_prompt_is_not_sent_again(workspace: Path, error: ProviderError) -> None:
    agent, provider = make_agent(
        workspace,
        [ScriptedReply(text="first answer"), ScriptedReply(error=error), ScriptedReply("ok")],
    )
    await drive(agent, "an accepted prompt")
    events = [e async for e in agent.run("look at this image", _image_entry())]
    ended = _ended(events)
    assert ended.reason == "error" and ended.error == str(error)
    assert ended.left_out == "prompt"
    assert ended.next_step is not None and "not sent again" in ended.next_step
    assert agent.last_interruption is None  # no note: the model never saw the prompt
    await drive(agent, "a new prompt")
    sent = provider.requests[-1].messages
    assert _texts(sent) == ["an accepted prompt", "first answer", "a new prompt"]
    assert not any(isinstance(p, ImagePart) for m in sent for p in m.content)
    on_disk = load(agent.session.path).entries
    (refusal,) = [e for e in on_disk if isinstance(e, Refusal)]
    assert refusal.status == error.status and refusal.error == str(error)
    prompt = next(
        e for e in on_disk if isinstance(e, MessageEntry) and e.message.text == "look at this image"
    )
    assert prompt.id in refusal.ids  # the prompt's line stays in the file, out of the view
    assert project(on_disk)[:-1] == sent  # a resumed session sends what this one did


async def test_a_refused_first_prompt_leaves_an_empty_view(workspace: Path) -> None:
    agent, provider = make_agent(workspace, [ScriptedReply(error=TOO_LARGE), ScriptedReply("ok")])
    ended = _ended(await drive(agent, "x" * 1000))
    assert ended.left_out == "prompt"
    assert agent.view() == []
    await drive(agent, "smaller")
    assert _texts(provider.requests[-1].messages) == ["smaller"]


async def test_a_refused_tool_round_is_left_out_with_a_note_and_the_prompt_stays(
    workspace: Path,
) -> None:
    (workspace / "notes.txt").write_text("hello\n")
    agent, provider = make_agent(
        workspace,
        [
            ScriptedReply(tool_calls=[ScriptedCall("Read", {"file_path": "notes.txt"})]),
            ScriptedReply(error=IMAGE_TOO_BIG),
            ScriptedReply(text="fine"),
        ],
    )
    ended = _ended(await drive(agent, "read the notes"))
    assert ended.left_out == "results"
    assert ended.next_step is not None and "send a message to go on" in ended.next_step
    await drive(agent, "go on")
    sent = provider.requests[-1].messages
    assert [m.role for m in sent] == ["user"]  # the round (tool_use and result) is left out
    texts = _texts(sent)
    assert texts[0] == "read the notes" and texts[-1] == "go on"
    assert "Read notes.txt" in texts[1] and "effects remain" in texts[1]
    assert project(load(agent.session.path).entries)[:-1] == sent


@pytest.mark.parametrize(
    ("status", "what"),
    [(401, "check ANTHROPIC_API_KEY"), (403, "may use the model"), (404, "the model name")],
)
async def test_401_403_404_keep_the_prompt(workspace: Path, status: int, what: str) -> None:
    error = ProviderError(f"error {status}: {what}", status=status)
    agent, provider = make_agent(workspace, [ScriptedReply(error=error), ScriptedReply("ok")])
    ended = _ended(await drive(agent, "keep me"))
    assert ended.left_out is None and what in (ended.error or "")
    assert ended.next_step is not None and "kept" in ended.next_step
    await drive(agent, "fixed it")
    texts = _texts(provider.requests[-1].messages)
    assert texts[0] == "keep me" and texts[-1] == "fixed it"
    assert not [e for e in load(agent.session.path).entries if isinstance(e, Refusal)]
    assert [e for e in load(agent.session.path).entries if isinstance(e, Interruption)]


async def test_a_transient_failure_keeps_the_prompt_and_says_to_try_again(workspace: Path) -> None:
    # five tries, each told to retry at once (retry-after 0), all overloaded
    error = ProviderError(
        "Anthropic API error 529 overloaded_error", status=529, retryable=True, retry_after=0
    )
    agent, provider = make_agent(
        workspace, [*[ScriptedReply(error=error)] * 5, ScriptedReply("ok")]
    )
    ended = _ended(await drive(agent, "keep me too"))
    assert ended.left_out is None
    assert ended.next_step is not None and "try again in a moment" in ended.next_step.lower()
    await drive(agent, "again")
    assert _texts(provider.requests[-1].messages)[0] == "keep me too"


async def test_a_refusal_with_nothing_new_to_leave_out_says_so(workspace: Path) -> None:
    """A "keep going" turn adds nothing: the refused request is the conversation itself."""
    bad_key = ProviderError("check ANTHROPIC_API_KEY", status=401)
    agent, _ = make_agent(
        workspace, [ScriptedReply(error=bad_key), ScriptedReply(error=IMAGE_TOO_BIG)]
    )
    await drive(agent, "a prompt")  # kept, with a note
    ended = _ended([e async for e in agent.run(None)])
    assert ended.left_out is None
    assert ended.next_step is not None and "/rewind" in ended.next_step


def _compacting_agent(
    workspace: Path, provider: ScriptedProvider, *, config: CompactConfig | None = None
) -> Agent:
    agent, _ = make_agent(workspace, [])
    agent.provider = provider
    agent.compactor = Compactor(config or CompactConfig(), counter=counter())
    return agent


SUMMARY = ScriptedReply(text="<summary>Goal: answer the long question.</summary>")


async def test_a_context_length_refusal_compacts_once_and_retries(workspace: Path) -> None:
    replies = [ScriptedReply(text="earlier"), ScriptedReply(error=TOO_LONG), SUMMARY]
    provider = ScriptedProvider([*replies, ScriptedReply("done")])
    agent = _compacting_agent(workspace, provider)
    await drive(agent, "an earlier prompt")
    events = await drive(agent, "a long question")
    assert _ended(events).reason == "done"
    assert [e.strategy for e in events if isinstance(e, Compacted)] == ["full"]
    retry = provider.requests[-1]
    assert retry.tools and "Goal: answer the long question." in _texts(retry.messages)[0]
    assert len(provider.requests) == 4  # earlier, refused, summary, retry


async def test_a_context_length_refusal_after_the_retry_leaves_the_prompt_out(
    workspace: Path,
) -> None:
    provider = ScriptedProvider(
        [
            ScriptedReply(text="earlier"),
            ScriptedReply(error=TOO_LONG),
            SUMMARY,
            ScriptedReply(error=TOO_LONG),
            ScriptedReply("fine"),
        ]
    )
    agent = _compacting_agent(workspace, provider)
    await drive(agent, "an earlier prompt")
    events = await drive(agent, "a" * 500)
    ended = _ended(events)
    assert ended.left_out == "prompt" and ended.next_step is not None
    assert "shorten it" in ended.next_step
    assert len([e for e in events if isinstance(e, Compacted)]) == 1  # one compaction only
    await drive(agent, "short")
    assert "a" * 500 not in _texts(provider.requests[-1].messages)


async def test_with_compaction_off_a_context_length_refusal_leaves_the_prompt_out(
    workspace: Path,
) -> None:
    provider = ScriptedProvider([ScriptedReply(error=TOO_LONG), ScriptedReply("ok")])
    agent = _compacting_agent(workspace, provider, config=CompactConfig(disable_compact=True))
    ended = _ended(await drive(agent, "too long"))
    assert ended.left_out == "prompt" and len(provider.requests) == 1
    assert ended.next_step is not None and "/compact" in ended.next_step


def test_the_projection_honours_a_refusal_of_entries_it_never_saw() -> None:
    """A refusal naming ids that are not there (a torn file) changes nothing else."""
    kept = MessageEntry(message=user_text("kept"))
    view = project([kept, Refusal(ids=["no-such-id"], error="x")])
    assert _texts(view) == ["kept"]


@pytest.mark.parametrize(
    ("error", "step"),
    [
        (ProviderError("no Anthropic credentials: set ANTHROPIC_API_KEY"), FIX_THEN_SEND),
        (
            ProviderError("ANTHROPIC_BASE_URL 'x' is not a usable URL: it names no host"),
            FIX_THEN_SEND,
        ),
        (ProviderError("could not reach the Anthropic API", retryable=True), TRY_LATER),
        (
            too_long_a_wait(ProviderError("429", retryable=True, status=429), 7200, 60, 0),
            SEND_AGAIN,
        ),
    ],
)
def test_every_kept_failure_says_what_to_do_next(error: ProviderError, step: str) -> None:
    assert kept_step(error) == step
