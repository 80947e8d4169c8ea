"""A server's tool result as Peri's tool output: text and images kept, the rest described, and a
result over the token limit cut with a note, the whole of it saved where the model can Read it."""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from pathlib import Path
from typing import Any

from peri_cli.base.images import MAX_IMAGE_BYTES
from peri_cli.base.messages import ImagePart, TextPart
from peri_cli.base.textsafe import scrub_surrogates
from peri_cli.base.tool import ToolOutput
from peri_cli.context.tokens import TokenCounter

MAX_RESULT_TOKENS = 25_000
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def to_output(result: Any, *, tool: str, session_dir: Path, counter: TokenCounter) -> ToolOutput:
    """`result` is the SDK's CallToolResult; `is_error` on it makes an error tool result."""
    texts: list[str] = []
    images: list[ImagePart] = []
    for block in result.content or []:
        text, image = _block(block)
        if image is not None:
            images.append(image)
        if text:
            texts.append(text)
    if not texts and result.structured_content is not None:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=2))
    text = scrub_surrogates("\n".join(texts))
    if not text and not images:
        text = "(the tool returned no content)"
    text = cap_text(text, tool=tool, session_dir=session_dir, counter=counter)
    parts: list[TextPart | ImagePart] = [TextPart(text=text)] if text else []
    parts.extend(images)
    return ToolOutput(parts, is_error=bool(result.is_error))


def cap_text(
    text: str,
    *,
    tool: str,
    session_dir: Path,
    counter: TokenCounter,
    limit: int = MAX_RESULT_TOKENS,
) -> str:
    """`text`, or its start plus a note saying where the whole is, when over `limit` tokens."""
    if len(text) <= limit:  # a token is at least one character
        return text
    total = counter.count_text(text)
    if total <= limit:
        return text
    side = session_dir / "outputs" / f"mcp-{uuid.uuid4().hex}.txt"
    try:
        side.parent.mkdir(parents=True, exist_ok=True)
        side.write_text(text, encoding="utf-8")
        where = f"The whole result is in {side}; Read it with offset/limit, or Grep it."
    except OSError as e:
        where = f"The whole result could not be saved ({e.strerror or e})."
    keep = _head(text, limit, total, counter)
    return (
        f"{keep}\n\n[{tool}: the result was cut here; it is about {total} tokens, over the "
        f"{limit}-token limit for one tool result. {where}]"
    )


def _head(text: str, limit: int, total: int, counter: TokenCounter) -> str:
    """The longest start of `text` (found in a few steps) that is within `limit` tokens."""
    end = int(len(text) * limit / total * 0.97)
    for _ in range(8):
        head = text[:end]
        count = counter.count_text(head)
        if count <= limit:
            return head
        end = int(end * limit / count * 0.97)
    return text[: limit // 4]


def _block(block: Any) -> tuple[str, ImagePart | None]:
    """One content block as text and/or an image the model can see."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text), None
    if kind == "image":
        return _image(block.data, block.mime_type)
    if kind == "audio":
        return f"[audio ({block.mime_type}) returned by the tool; not shown]", None
    if kind == "resource_link":
        title = block.title or block.name
        return f"[resource: {title} <{block.uri}>]", None
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return f"[resource {resource.uri}]\n{text}", None
        mime = resource.mime_type or "binary"
        return f"[resource {resource.uri} ({mime}); binary content not shown]", None
    return f"[content of type {kind!r} not shown]", None


def describe_block(block: Any) -> str:
    """One content block as text only (an image becomes a note)."""
    text, image = _block(block)
    return text or (f"[image ({image.media_type})]" if image is not None else "")


def _image(data: str, mime: str) -> tuple[str, ImagePart | None]:
    if mime not in IMAGE_TYPES:
        return f"[image ({mime}) returned by the tool; this type cannot be shown]", None
    try:
        size = len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return "[an image returned by the tool was not valid base64; not shown]", None
    if size > MAX_IMAGE_BYTES:
        return f"[an image of {size} bytes returned by the tool is too large to show]", None
    return "", ImagePart(media_type=mime, data=data)
