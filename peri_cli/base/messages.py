"""Provider-neutral messages: small typed values with a discriminator and one serializer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from peri_cli.base.textsafe import has_surrogates, scrub_surrogates


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class TextPart(_Part):
    type: Literal["text"] = "text"
    text: str


class ThinkingPart(_Part):
    """A reasoning block; a signed one goes back to the provider unchanged or not at all."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str | None = None
    redacted: bool = False


class ImagePart(_Part):
    type: Literal["image"] = "image"
    media_type: str
    data: str  # base64


class ToolUsePart(_Part):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]


ResultContent = Annotated[TextPart | ImagePart, Field(discriminator="type")]


class ToolResultPart(_Part):
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[ResultContent]
    is_error: bool = False

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))


Part = Annotated[
    TextPart | ThinkingPart | ImagePart | ToolUsePart | ToolResultPart,
    Field(discriminator="type"),
]

Role = Literal["user", "assistant"]


class Usage(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """Everything the request put into the window, cached or not."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    @property
    def cache_read_share(self) -> float:
        total = self.prompt_tokens
        return self.cache_read_input_tokens / total if total else 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
        )


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    role: Role
    content: list[Part]

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))

    @property
    def tool_uses(self) -> list[ToolUsePart]:
        return [p for p in self.content if isinstance(p, ToolUsePart)]

    @property
    def tool_results(self) -> list[ToolResultPart]:
        return [p for p in self.content if isinstance(p, ToolResultPart)]


def user_text(text: str) -> Message:
    return Message(role="user", content=[TextPart(text=text)])


def tool_result(tool_use_id: str, text: str, *, is_error: bool = False) -> ToolResultPart:
    return ToolResultPart(tool_use_id=tool_use_id, content=[TextPart(text=text)], is_error=is_error)


def dump_message(message: Message) -> dict[str, Any]:
    """The one serializer: a JSON-ready dict, used by the transcript and the providers alike."""
    return message.model_dump(mode="json")


def load_message(data: object) -> Message:
    return Message.model_validate(data)


def _scrub_value(value: Any, path: str, bad: list[str]) -> Any:
    """`value` with lone surrogates replaced, recording where they were."""
    if isinstance(value, str):
        if has_surrogates(value):
            bad.append(path or "input")
            return scrub_surrogates(value)
        return value
    if isinstance(value, dict):
        return {
            _scrub_value(k, f"{path}.{k!s}".lstrip("."), bad): _scrub_value(
                v, f"{path}.{k!s}".lstrip("."), bad
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_scrub_value(v, f"{path}[{i}]", bad) for i, v in enumerate(value)]
    return value


def scrub_message(message: Message) -> tuple[Message, dict[str, str]]:
    """A message that UTF-8 can encode (lone surrogates from lax JSON become U+FFFD), and the
    tool calls whose input held one (id -> where), which must not run on altered input."""
    bad_calls: dict[str, str] = {}
    parts: list[Any] = []
    changed = False
    for part in message.content:
        new: Any = part
        if isinstance(part, TextPart) and has_surrogates(part.text):
            new = TextPart(text=scrub_surrogates(part.text))
        elif isinstance(part, ThinkingPart) and has_surrogates(part.thinking):
            new = part.model_copy(update={"thinking": scrub_surrogates(part.thinking)})
        elif isinstance(part, ToolUsePart):
            bad: list[str] = []
            clean = _scrub_value(part.input, "", bad)
            if bad or has_surrogates(part.name) or has_surrogates(part.id):
                bad_calls[scrub_surrogates(part.id)] = ", ".join(bad) or "name"
                new = ToolUsePart(
                    id=scrub_surrogates(part.id), name=scrub_surrogates(part.name), input=clean
                )
        changed = changed or new is not part
        parts.append(new)
    if not changed:
        return message, {}
    return Message(role=message.role, content=parts), bad_calls
