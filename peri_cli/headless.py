"""`peri -p`: run one prompt to its end without a screen and print it in the chosen output format.

A thin face over the public door: it reaches Peri only through `peri_cli.sdk` (the import-linter
contract "headless-through-the-door" holds it to that)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import select
import signal
import sys
from pathlib import Path
from typing import IO, TextIO, TypeGuard

from peri_cli.sdk import PeriClient, PeriError, PeriOptions, ResultEvent, SystemEvent
from peri_cli.sdk.runtime import spec_from_args
from peri_cli.sdk.structured import json_schema_flag

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
STDIN_CAP = 256 * 1024  # bytes of piped input added to the prompt
STDIN_WAIT = 1.0  # seconds to wait for piped input when a prompt was given as an argument


def read_piped_stdin(stream: IO[bytes] | None, *, wait: float | None) -> str | None:
    """Text piped into `peri -p`, or None (a terminal, nothing piped, or nothing within `wait`).

    A stdin that is open but never written (some CI runners) must not hang a run that has its
    prompt already: with `wait` set, input that has not started by then is not waited for."""
    if stream is None:
        return None
    try:
        if stream.isatty():
            return None
        fd = stream.fileno()
    except (OSError, ValueError):
        return None
    if wait is not None:
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            return None
    chunks: list[bytes] = []
    size = 0
    while size <= STDIN_CAP:
        chunk = os.read(fd, STDIN_CAP + 1 - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    data = b"".join(chunks)
    text = data[:STDIN_CAP].decode("utf-8", errors="replace")
    if size > STDIN_CAP:
        text += f"\n[piped input cut: only its first {STDIN_CAP // 1024} KiB are included]"
    return text


def combine_prompt(argument: str, piped: str | None) -> str:
    """The prompt argument followed by the piped text (either may be missing)."""
    if not piped or not piped.strip():
        return argument
    return f"{argument}\n\n{piped}" if argument.strip() else piped


def print_error(fmt: str, message: str, session_id: str = "") -> None:
    """A run that failed before it started: one line on stderr, and the result object on stdout
    for the JSON formats, so a script reading stdout learns of it too."""
    print(f"peri: error: {message}", file=sys.stderr)
    if fmt != "text":
        print(ResultEvent.failure(session_id, message).to_json())


def run_headless(args: argparse.Namespace, prompt: str) -> int:
    """`peri -p`: the exit status (0 done, 1 failed, 2 bad usage)."""
    return asyncio.run(_main(args, prompt, sys.stdout, sys.stderr))


async def _main(args: argparse.Namespace, prompt: str, out: TextIO, err: TextIO) -> int:
    fmt = args.output_format
    try:
        schema = getattr(args, "json_schema", None)
        output_format = None if schema is None else json_schema_flag(schema, Path.cwd())
        options = PeriOptions(
            include_partial_messages=args.include_partial_messages, output_format=output_format
        )
    except PeriError as e:  # a bad --json-schema: one line, exit 2
        print_error(fmt, str(e))
        return e.exit_code
    client = PeriClient(options, spec=spec_from_args(args, os.environ))
    try:
        await client.connect()
    except PeriError as e:
        print_error(fmt, str(e))
        return e.exit_code
    try:
        try:
            await client.send(prompt)
        except PeriError as e:
            print_error(fmt, str(e), e.session_id)
            return e.exit_code
        for warning in client.warnings:
            print(f"peri: warning: {warning}", file=err)
        _on_signals(client)
        result = await _print_events(client, fmt, out, err)
        if summary := client.denial_summary():
            print(f"peri: {summary}", file=err)
    finally:
        await client.close()
    return _finish(result, fmt, out, err)


def _on_signals(client: PeriClient) -> None:
    """Ctrl+C, SIGTERM and SIGHUP stop the run; its result says "cancelled"."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, lambda: loop.create_task(client.interrupt()))


async def _print_events(client: PeriClient, fmt: str, out: TextIO, err: TextIO) -> ResultEvent:
    async for event in client.events():
        if fmt == "stream-json" and not isinstance(event, ResultEvent):
            out.write(event.to_json() + "\n")
            out.flush()
        elif _stderr_notice(event, fmt):
            print(f"peri: {event.data.get('text', '')}", file=err)
        if isinstance(event, ResultEvent):
            return event
    raise AssertionError("the run ended without a result")


def _stderr_notice(event: object, fmt: str) -> TypeGuard[SystemEvent]:
    """A warning or error notice, which the text and json formats show on stderr."""
    return (
        fmt != "stream-json"
        and isinstance(event, SystemEvent)
        and event.subtype == "notice"
        and event.data.get("level") != "info"
    )


def _finish(result: ResultEvent, fmt: str, out: TextIO, err: TextIO) -> int:
    if fmt == "text":
        if "structured_output" in result.model_fields_set:  # the answer, as JSON
            out.write(json.dumps(result.structured_output, ensure_ascii=False) + "\n")
        elif result.result:
            out.write(result.result.rstrip("\n") + "\n")
        if result.error is not None:
            print(f"peri: error: {result.error}", file=err)
    else:
        out.write(result.to_json() + "\n")
    out.flush()
    return EXIT_FAILED if result.is_error else EXIT_OK
