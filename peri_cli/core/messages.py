"""Provider-neutral messages: small typed values with a discriminator and one serializer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


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
