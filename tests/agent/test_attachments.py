"""@ attachments, pasted images and `!` output as entries: parsing, limits, refusals, compaction."""

from __future__ import annotations

import base64
from pathlib import Path

from peri_cli.agent.attachments import (
    AttachContext,
    attach,
    mentions,
    pasted_image,
    shell_entry,
)
from peri_cli.base.messages import ImagePart, TextPart
from peri_cli.base.tool import ToolContext
from peri_cli.permissions.call_facts import RuleContext
from peri_cli.permissions.rule_syntax import RuleSource, parse_rule
from peri_cli.session.turns import is_human_turn, is_typed
from peri_cli.tools.read import ReadTool

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _ctx(ws: Path, *denied: str) -> AttachContext:
    return AttachContext(
        workspace=ws,
        read=ReadTool(),
        tool_ctx=ToolContext(workspace=ws, session_dir=ws / ".s"),
        rules=[parse_rule(text, "deny", RuleSource("user")) for text in denied],
        rule_ctx=RuleContext(ws, True, ws),
    )


def test_mentions_are_found_once_and_not_inside_words() -> None:
    text = 'see @a.py, @"my file.txt" and @a.py again; mail me@host.org; @'
    assert mentions(text) == ["a.py,", "my file.txt", "a.py"]


async def test_a_large_file_attaches_its_head_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 3001)))
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01" * 10)
    (tmp_path / "pic.png").write_bytes(PNG)
    found = await attach("@big.txt @bin.dat @pic.png @missing.txt", _ctx(tmp_path), {})
    text = "".join(p.text for p in found.parts if isinstance(p, TextPart))
    assert "     1\tline 1" in text and "  2000\tline 2000" in text and "line 2001" not in text
    assert "Showing lines 1-2000 of 3000" in text
    assert [p.media_type for p in found.parts if isinstance(p, ImagePart)] == ["image/png"]
    assert found.attached == ["big.txt", "pic.png"]
    assert len(found.skipped) == 1 and "bin.dat" in found.skipped[0]  # missing.txt: just text


async def test_pasted_images_attach_only_while_their_tag_is_in_the_text(tmp_path: Path) -> None:
    image = pasted_image("data:image/png;base64," + base64.b64encode(PNG).decode(), tmp_path)
    assert isinstance(image, ImagePart)
    found = await attach("look [image #1]", _ctx(tmp_path), {1: image, 2: image})
    assert [type(p).__name__ for p in found.parts] == ["TextPart", "ImagePart"]
    assert pasted_image("data:image/png;base64,AAAA", tmp_path) == (
        "the pasted data is not a PNG, JPEG, GIF or WebP image"
    )
    assert pasted_image("hello world", tmp_path) is None
    assert pasted_image(str(tmp_path / "nope.png"), tmp_path) is None
    (tmp_path / "fake.png").write_text("not an image")
    assert "is not a PNG" in str(pasted_image(str(tmp_path / "fake.png"), tmp_path))


def test_attachments_and_shell_output_are_never_a_typed_turn(tmp_path: Path) -> None:
    entry = shell_entry("ls", "a\nb", False)
    assert not is_typed(entry) and not is_human_turn(entry)
    assert "$ ls\na\nb" in entry.message.text


async def test_trailing_punctuation_is_not_part_of_the_path(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    found = await attach("fix @a.py, please", _ctx(tmp_path), {})
    assert found.attached == ["a.py"]


async def test_an_unknown_users_home_is_not_a_path(tmp_path: Path) -> None:
    # `~name` for a user the system does not know cannot be expanded: the text stays as typed
    found = await attach("see @~peri_no_such_user/x.py", _ctx(tmp_path), {})
    assert found.parts == [] and found.attached == [] and found.skipped == []
    assert pasted_image("~peri_no_such_user/a.png", tmp_path) is None


async def test_a_folder_listing_leaves_out_what_read_may_not_see(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("TOKEN=1\n")
    (tmp_path / "app.py").write_text("x = 1\n")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.pem").write_text("-----BEGIN-----\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / ".env").write_text("TOKEN=2\n")
    ctx = _ctx(tmp_path, "Read(.env)", "Read(secrets/**)", "Read(**/.env)")
    found = await attach("@. @docs @secrets", ctx, {})
    texts = [p.text for p in found.parts if isinstance(p, TextPart)]
    assert texts == [
        "[Attached folder @.: its entries]\napp.py\ndocs/\n[2 entries hidden by a Read deny rule]",
        "[Attached folder @docs: its entries]\n(empty)\n[1 entry hidden by a Read deny rule]",
    ]
    assert found.attached == [".", "docs"]
    # like a Grep of it, a folder whose whole content is denied is refused, not listed empty
    assert found.skipped == ["@secrets: not attached, a deny rule covers it (Read(secrets/**))"]
