"""Structured output on the runtime: the `output_format` option checked when the options are
built, `--json-schema JSON|@FILE` read, and one prompt run with the `StructuredOutput` tool (a
turn, at most one retry, then the verdict on the prompt's `Translator`).

The tool is part of the request only for prompts that ask: it is added to the main agent's
tools when such a prompt starts and removed when it ends, never written into the session's
frozen prompt. A resumed session asks again or not, as its new run says (earlier answers stay in
its transcript as ordinary tool calls)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from peri_cli.agent.structured import Accept, GiveUp, Retry, StructuredCapture, decide
from peri_cli.base import safe_read
from peri_cli.base.safe_read import SafeReadError
from peri_cli.mcp.schema import MAX_SCHEMA_DEPTH, compile_check, nesting_depth, short_message
from peri_cli.sdk.errors import OptionError, PeriError

if TYPE_CHECKING:
    from peri_cli.agent.loop import Agent
    from peri_cli.base.events import Event as CoreEvent
    from peri_cli.sdk.translate import Translator


def output_schema(output_format: object, option: str = "output_format") -> dict[str, Any]:
    """The JSON Schema `{"type": "json_schema", "schema": {...}}` gives; OptionError naming
    `option` when it is not that shape, or the schema is not a valid JSON Schema of an object
    (the model gives the answer as a tool's input, which is an object)."""
    if not isinstance(output_format, Mapping):
        raise OptionError(option, f"must be a mapping, not {type(output_format).__name__}")
    if (kind := output_format.get("type")) != "json_schema":
        raise OptionError(option, f"'type' must be 'json_schema', not {kind!r}")
    schema = output_format.get("schema")
    if not isinstance(schema, Mapping):
        raise OptionError(option, f"'schema' must be a JSON Schema object, not {schema!r}")
    problem = schema_problem(dict(schema))
    if problem is not None:
        raise OptionError(option, problem)
    return dict(schema)


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why `schema` cannot be the answer's schema, or None."""
    import jsonschema
    from jsonschema.exceptions import SchemaError

    if nesting_depth(schema) > MAX_SCHEMA_DEPTH:
        return f"the schema nests more than {MAX_SCHEMA_DEPTH} levels deep"
    try:
        json.dumps(schema)
    except (TypeError, ValueError) as e:
        return f"the schema is not JSON ({e})"
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as e:
        return f"not a valid JSON Schema: {short_message(e.message)}"
    if schema.get("type", "object") != "object":
        kind = json.dumps(schema.get("type"))
        return f'the schema must describe an object ("type": "object"), not {kind}'
    return None


def json_schema_flag(text: str, cwd: Path) -> dict[str, Any]:
    """`--json-schema JSON|@FILE` as an `output_format`; PeriError (exit 2) in one line when
    the file cannot be read, the text is not JSON or not a valid schema."""
    source = "--json-schema"
    if text.startswith("@"):
        path = (cwd / text[1:]).expanduser()
        source = f"--json-schema {text}"
        try:  # (as a config file: a FIFO is never opened, a huge file never loaded)
            text = safe_read.read_text(path)
        except SafeReadError as e:
            raise PeriError(f"{source}: cannot read {path}: {e.reason}", 2) from None
    try:
        schema = json.loads(text)
    except ValueError as e:
        raise PeriError(f"{source}: not JSON: {e}", 2) from None
    output_format = {"type": "json_schema", "schema": schema}
    try:
        output_schema(output_format)
    except OptionError as e:
        raise PeriError(f"{source}: {str(e).split(': ', 1)[1]}", 2) from None
    return output_format


class StructuredPrompt:
    """One prompt that must end with a `StructuredOutput` answer."""

    def __init__(self, schema: dict[str, Any]) -> None:
        from peri_cli.tools.structured_output import StructuredOutputTool

        self.capture = StructuredCapture()
        check, _ = compile_check(schema, root="(root)")  # (a schema `schema_problem` accepted)
        self.tool = StructuredOutputTool(schema, check, self.capture)

    async def run(
        self,
        agent: Agent,
        out: Translator,
        turn: AsyncIterator[CoreEvent],
        answered: Callable[[AsyncIterator[CoreEvent]], Awaitable[None]],
    ) -> None:
        """`turn` through `answered` with the tool present, then the retry if one is due; the
        verdict goes on `out` (its `structured_output`, or its error and subtype)."""
        agent.tools.add(self.tool, deferred=False)
        try:
            await answered(turn)
            retries = 0
            while out.error is None:
                match decide(self.capture, retries):
                    case Accept(value=value):
                        out.structured_output, out.structured_given = value, True
                        return
                    case Retry(note=note):
                        retries += 1
                        self.capture.next_attempt()
                        agent.inbox.append(note)  # a user-side note, as a queued report
                        await answered(agent.run(None))
                    case GiveUp(error=error):
                        out.error, out.structured_failed = error, True
                        return
        finally:
            agent.tools.remove(self.tool.name)
