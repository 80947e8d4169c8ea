"""The answer as a JSON value fitting a schema (the Claude Agent SDK's `output_format`): the
model hands it over with the `StructuredOutput` tool; a value that does not fit is sent back once
with what failed; it arrives as `result.structured_output`.
"""

import asyncio
import json

from peri_cli.sdk import PeriOptions, ResultEvent, query

SCHEMA = {
    "type": "object",
    "properties": {
        "functions": {"type": "array", "items": {"type": "string"}},
        "risk": {"type": "string", "enum": ["low", "medium", "high"]},
    },
    "required": ["functions", "risk"],
}


async def main() -> None:
    options = PeriOptions(output_format={"type": "json_schema", "schema": SCHEMA})
    async for message in query("Which functions in calc.py are risky?", options):
        if isinstance(message, ResultEvent):
            print(f"Result: {message.subtype}")
            print(json.dumps(message.structured_output, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main())
