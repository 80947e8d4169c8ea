"""`@path` attachments, pasted images and `!` command output: user-side content the person did not
type, stored as its own message entry with an `origin` (Micro compaction shortens it like a tool
result and never counts it as a user turn, `turns.is_typed`).

A file is attached as the Read tool gives it (numbered lines, its limits, images as image parts),
through the tool registry, so the core imports no tool; only a readable file inside the workspace
that no Read deny rule covers is attached.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from peri_cli.base.images import MAX_IMAGE_BYTES, image_type
from peri_cli.base.messages import ImagePart, Message, TextPart
from peri_cli.base.safe_read import SafeReadError, is_inside, read_bytes
from peri_cli.base.textsafe import visible
from peri_cli.base.tool import Tool, ToolContext, ToolError
from peri_cli.permissions.call_facts import RuleContext
from peri_cli.permissions.hidden import HiddenPaths
from peri_cli.permissions.rule_syntax import Rule
from peri_cli.permissions.rules import read_denied
from peri_cli.session.transcript import MessageEntry

if TYPE_CHECKING:
    from peri_cli.agent.loop import Agent

ORIGIN_ATTACHMENT = "attachment"  # files and images the user attached to a prompt
ORIGIN_SHELL = "shell"  # a `!` command the user ran, with its output

MAX_LISTING = 200  # entries of an attached directory
IMAGE_SUFFIXES = frozenset(
    {".png", ".jpg", ".jpeg", ".gif", ".webp"}
)  # (the bytes decide the type)
# `@path` or `@"a path with spaces"`, not inside a word (an e-mail address stays text).
_MENTION = re.compile(r'(?<![\w@])@(?:"([^"\n]+)"|([^\s"]+))')
_TRAILING = ",.;:!?)]}'"
_IMAGE_TAG = re.compile(r"\[image #(\d+)\]")


@dataclass
class Attachments:
    """What a prompt's `@path`s and pasted images attach, and what was left out and why."""

    parts: list[TextPart | ImagePart] = field(default_factory=list)
    attached: list[str] = field(default_factory=list)  # the paths, as the user wrote them
    skipped: list[str] = field(default_factory=list)  # one line each: a path and why

    def entry(self) -> MessageEntry | None:
        """The user-side entry that carries them (None when nothing was attached)."""
        if not self.parts:
            return None
        message = Message(role="user", content=list(self.parts))
        return MessageEntry.model_validate({"message": message, "origin": ORIGIN_ATTACHMENT})


def mentions(text: str) -> list[str]:
    """The `@path`s in a prompt, in order, each once."""
    found: list[str] = []
    for match in _MENTION.finditer(text):
        raw = match.group(1) or match.group(2) or ""
        if raw and raw not in found:
            found.append(raw)
    return found


@dataclass(frozen=True)
class AttachContext:
    """Where attachments may come from and how they are read."""

    workspace: Path
    read: Tool | None  # the session's Read tool (None: the Meta Harness removed it)
    tool_ctx: ToolContext
    rules: list[Rule]
    rule_ctx: RuleContext
    hidden: HiddenPaths = field(default_factory=HiddenPaths)  # never attached (Read asks)

    @classmethod
    def of(cls, agent: Agent, workspace: Path) -> AttachContext:
        """What an agent's Read tool, tool context and rules allow to be attached."""
        return cls(
            workspace=workspace,
            read=agent.tools.get("Read"),
            tool_ctx=agent.tool_ctx,
            rules=agent.policy.rules.rules,
            rule_ctx=agent.policy.context(),
            hidden=agent.policy.hidden,
        )


async def attach(
    text: str,
    ctx: AttachContext,
    images: dict[int, ImagePart],
    *,
    only: Sequence[str] | None = None,
) -> Attachments:
    """The attachments of a prompt: each `@path` naming a file or folder (`only`: these of
    them), and each pasted image whose `[image #N]` tag is still in the text."""
    out = Attachments()
    for raw in mentions(text) if only is None else only:
        await _attach_one(raw, ctx, out)
    for match in _IMAGE_TAG.finditer(text):
        image = images.get(int(match.group(1)))
        if image is not None:
            out.parts += [TextPart(text=f"[image #{match.group(1)}]"), image]
    return out


def locate(raw: str, workspace: Path) -> tuple[Path, str] | None:
    """The existing path a mention names and how it was written (trailing punctuation dropped
    when the path is not there); None when it names none (a handle, a decorator)."""
    for candidate in (raw, raw.rstrip(_TRAILING)):
        path = _expand(candidate, workspace) if candidate else None
        if path is not None and os.path.lexists(path):
            return path, candidate
    return None


def _expand(raw: str, workspace: Path) -> Path | None:
    """`raw` as an absolute path, `~` expanded; None when it cannot be one (`~name` of a user
    the system does not know makes expanduser raise, and that text is then not a path)."""
    try:
        path = Path(raw).expanduser()
    except RuntimeError:
        return None
    return path if path.is_absolute() else workspace / path


async def _attach_one(raw: str, ctx: AttachContext, out: Attachments) -> None:
    found = locate(raw, ctx.workspace)
    if found is None:
        return  # not a file: the text stays as typed (a handle, a decorator)
    path, written = found
    shown = visible(written)
    if not is_inside(path, ctx.workspace):
        out.skipped.append(f"@{shown}: not attached, it is outside the workspace")
        return
    rule = read_denied(path, ctx.rules, ctx.rule_ctx, folder=path.is_dir())
    if rule is not None:
        out.skipped.append(f"@{shown}: not attached, a deny rule covers it ({rule.text})")
        return
    if ctx.hidden.covering(path) is not None:
        out.skipped.append(
            f"@{shown}: not attached, it is a hidden path (the default secrets or "
            "sandbox.filesystem.denyRead); ask for a Read of it, which asks you first"
        )
        return
    if path.is_dir():
        out.parts.append(TextPart(text=_listing(path, shown, ctx)))
        out.attached.append(shown)
        return
    if ctx.read is None:
        out.skipped.append(f"@{shown}: not attached, the Read tool is turned off")
        return
    try:
        params = ctx.read.validate({"file_path": str(path)})
        result = await ctx.read.call(params, ctx.tool_ctx)
    except ToolError as e:
        out.skipped.append(f"@{shown}: not attached, {e}")
        return
    if result.is_error:
        why = "".join(p.text for p in result.content if isinstance(p, TextPart))
        out.skipped.append(f"@{shown}: not attached: {visible(why.splitlines()[0] if why else '')}")
        return
    out.parts.append(TextPart(text=f"[Attached file @{shown}, as Read shows it]"))
    out.parts.extend(result.content)
    out.attached.append(shown)


def _listing(path: Path, shown: str, ctx: AttachContext) -> str:
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError as e:
        return f"[Attached folder @{shown}: cannot list it ({e.strerror or e})]"
    lines, hidden, checked = _visible_entries(entries, ctx)
    more = len(entries) - checked
    body = "\n".join(lines) + (f"\n[… {more} more entries]" if more > 0 else "")
    text = f"[Attached folder @{shown}: its entries]\n{body or '(empty)'}"
    if hidden:
        what = "1 entry" if hidden == 1 else f"{hidden} entries"
        text += f"\n[{what} hidden by a Read deny rule]"
    return text


def _visible_entries(
    entries: list[os.DirEntry[str]], ctx: AttachContext
) -> tuple[list[str], int, int]:
    """The names to list (folders with a `/`), leaving out what a Read deny rule keeps from the
    model, as Grep and Glob do; with how many were hidden and how many entries were looked at
    (checking stops once MAX_LISTING are kept, so a huge folder costs no more than a small one)."""
    lines: list[str] = []
    hidden = checked = 0
    for entry in entries:
        if len(lines) == MAX_LISTING:
            break
        checked += 1
        is_dir = entry.is_dir(follow_symlinks=False)
        path = Path(entry.path)
        if ctx.hidden.covering(path) is not None:
            continue  # a hidden path: not even its name
        if read_denied(path, ctx.rules, ctx.rule_ctx, folder=is_dir) is not None:
            hidden += 1
            continue
        lines.append(f"{entry.name}/" if is_dir else entry.name)
    return lines, hidden, checked


# --- pasted images ------------------------------------------------------------------------------

_DATA_URI = re.compile(r"data:(image/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/=\s]+)")


def pasted_image(text: str, workspace: Path) -> ImagePart | str | None:
    """What pasted text means as an image: an image part (a path to an image file, a file://
    URL, or image data as a data: URI), a one-line reason it could not be used, or None when
    it is not an image at all (the text is then pasted as text)."""
    stripped = text.strip()
    match = _DATA_URI.fullmatch(stripped)
    if match:
        try:
            data = base64.b64decode("".join(match.group(2).split()), validate=True)
        except ValueError:
            return "the pasted image data is not valid base64"
        if len(data) > MAX_IMAGE_BYTES:
            return "the pasted image is larger than 5 MB"
        media = image_type(data)
        if media is None:
            return "the pasted data is not a PNG, JPEG, GIF or WebP image"
        return ImagePart(media_type=media, data=base64.b64encode(data).decode("ascii"))
    if "\n" in stripped or not stripped:
        return None
    raw = stripped.removeprefix("file://").strip("'\"")
    raw = re.sub(r"\\(.)", r"\1", raw)  # a terminal drops a path in with its spaces escaped
    if Path(raw).suffix.lower() not in IMAGE_SUFFIXES:
        return None
    path = _expand(raw, workspace)
    if path is None:
        return None
    try:
        data = read_bytes(path, max_bytes=MAX_IMAGE_BYTES)
    except SafeReadError as e:
        return None if e.missing else f"{visible(raw)}: {e.reason}"
    media = image_type(data)
    if media is None:
        return f"{visible(raw)} is not a PNG, JPEG, GIF or WebP image"
    return ImagePart(media_type=media, data=base64.b64encode(data).decode("ascii"))


def shell_entry(command: str, output: str, is_error: bool) -> MessageEntry:
    """A `!` command and its output, for the model to see next turn."""
    status = " (it failed)" if is_error else ""
    text = f"[The user ran a shell command{status}]\n$ {command}\n{output}"
    return MessageEntry.model_validate(
        {"message": Message(role="user", content=[TextPart(text=text)]), "origin": ORIGIN_SHELL}
    )
