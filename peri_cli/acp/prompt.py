"""An ACP prompt's content blocks as the text the door takes, as `@file` works in the TUI:
text as typed, a resource link (the editor's @-mention) as `@path`, an embedded resource as
its text in a fenced block, an image as a pasted one (`[image #N]`, as the TUI pastes)."""

from __future__ import annotations

import base64
import binascii
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def _path_of(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _mention(path: str, cwd: Path) -> str:
    shown = path
    with contextlib.suppress(ValueError):
        shown = str(Path(path).relative_to(cwd))
    return f"@{shown}" if " " not in shown else f'@"{shown}"'


@dataclass
class Prompt:
    text: str = ""
    images: list[tuple[str, str]] = field(default_factory=list)  # (media type, base64)


def prompt_of(blocks: list[Any], cwd: Path) -> Prompt:
    out = Prompt()
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(_mention(_path_of(block.uri), cwd))
        elif isinstance(block, EmbeddedResourceContentBlock):
            parts.append(_embedded(block))
        elif isinstance(block, ImageContentBlock):
            parts.append(_image(block, out.images))
    out.text = " ".join(p for p in parts if p)
    return out


def _embedded(block: EmbeddedResourceContentBlock) -> str:
    resource = block.resource
    where = _path_of(resource.uri)
    if isinstance(resource, TextResourceContents):
        fence = "````" if "```" in resource.text else "```"
        return f"\n{where}:\n{fence}\n{resource.text}\n{fence}\n"
    return f"[{where}: binary content, not included]"


def _image(block: ImageContentBlock, images: list[tuple[str, str]]) -> str:
    try:
        ok = block.mime_type in _IMAGE_TYPES and bool(base64.b64decode(block.data, validate=True))
    except (binascii.Error, ValueError):
        ok = False
    if not ok:
        return f"[an image ({block.mime_type}) that could not be attached]"
    images.append((block.mime_type, block.data))
    return f"[image #{len(images)}]"
