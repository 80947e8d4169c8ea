"""Resume a session and fork it (written from the Claude Agent SDK's session docs: `resume`,
`fork_session`, `continue_conversation` keep their names).

The first client starts a session and remembers a fact; the second resumes it; the third forks
it (a copy with a new id: the original is left as it was).
"""

import asyncio

from peri_cli.sdk import PeriOptions, ResultEvent, query


async def ask(prompt: str, options: PeriOptions) -> ResultEvent:
    async for message in query(prompt, options):
        if isinstance(message, ResultEvent):
            return message
    raise RuntimeError("no result")


async def main() -> None:
    first = await ask("Remember: the deploy key is in vault/deploy.", PeriOptions())
    print(f"Started: {first.session_id[:8]} {first.result}")

    resumed = await ask("Where is the deploy key?", PeriOptions(resume=first.session_id))
    print(f"Resumed: same session {resumed.session_id == first.session_id}: {resumed.result}")

    forked = await ask(
        "Suppose it moved to vault/new. Where is it?",
        PeriOptions(resume=first.session_id, fork_session=True),
    )
    print(f"Forked: new session {forked.session_id != first.session_id}: {forked.result}")

    latest = await ask("And where was it first?", PeriOptions(continue_conversation=True))
    print(f"Continued the fork: {latest.session_id == forked.session_id}: {latest.result}")


if __name__ == "__main__":
    asyncio.run(main())
