"""What kind of image some bytes are, judged by their first bytes (never by the file's name)."""

from __future__ import annotations

MAX_IMAGE_BYTES = 5 * 1024 * 1024  # what a provider takes in one image block


def image_type(head: bytes) -> str | None:
    """The media type of a PNG, JPEG, GIF or WebP that starts with `head`, else None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None
