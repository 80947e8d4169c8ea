"""The config-file guard: regular files only, a size cap, an optional root (issue 9 item 16)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from peri_cli.base.safe_read import (
    MAX_CONFIG_BYTES,
    SafeReadError,
    is_inside,
    read_bytes,
    read_head,
    read_text,
)


def test_reads_a_regular_file_and_drops_a_bom(tmp_path: Path) -> None:
    f = tmp_path / "a.json"
    f.write_bytes(b"\xef\xbb\xbf{}")
    assert read_text(f) == "{}"
    assert read_bytes(f) == b"\xef\xbb\xbf{}"


def test_item16_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "AGENTS.md"
    os.mkfifo(fifo)  # nobody writes to it: a plain open() would wait forever
    with pytest.raises(SafeReadError) as e:
        read_text(fifo)
    assert e.value.problem == "not_regular"
    assert "FIFO" in str(e.value) and str(fifo) in str(e.value)


def test_item16_dev_zero_is_refused_unread() -> None:
    with pytest.raises(SafeReadError) as e:
        read_bytes(Path("/dev/zero"))
    assert e.value.problem == "not_regular" and "device" in e.value.reason


def test_a_symlink_to_a_fifo_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "link.md").symlink_to(tmp_path / "pipe")
    with pytest.raises(SafeReadError) as e:
        read_text(tmp_path / "link.md")
    assert e.value.problem == "not_regular"


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s"
    if len(str(path)) > 100:
        pytest.skip("socket path too long for AF_UNIX")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        with pytest.raises(SafeReadError) as e:
            read_text(path)
    assert e.value.problem == "not_regular" and "socket" in e.value.reason


def test_directory_missing_and_loop_are_classified(tmp_path: Path) -> None:
    with pytest.raises(SafeReadError) as e:
        read_text(tmp_path)
    assert e.value.problem == "not_regular" and "directory" in e.value.reason
    with pytest.raises(SafeReadError) as e:
        read_text(tmp_path / "nope")
    assert e.value.missing
    with pytest.raises(SafeReadError) as e:
        read_text(tmp_path / "nope" / "deeper")
    assert e.value.missing
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(SafeReadError) as e:
        read_text(tmp_path / "a")
    assert e.value.problem == "unreadable" and "loop" in e.value.reason


def test_size_cap_names_the_file_and_the_limit(tmp_path: Path) -> None:
    f = tmp_path / "big.md"
    f.write_bytes(b"x" * 2049)
    with pytest.raises(SafeReadError) as e:
        read_text(f, max_bytes=2048)
    assert e.value.problem == "too_large"
    assert str(e.value) == f"{f}: is larger than 2 KiB (2049 bytes); not read"
    f.write_bytes(b"x" * 2048)
    assert len(read_text(f, max_bytes=2048)) == 2048
    assert MAX_CONFIG_BYTES == 1 << 20


def test_binary_content_is_not_text(tmp_path: Path) -> None:
    f = tmp_path / "b"
    f.write_bytes(b"a\x00b")
    with pytest.raises(SafeReadError, match="NUL"):
        read_text(f)
    f.write_bytes(b"\xff\xfe")
    with pytest.raises(SafeReadError, match="UTF-8"):
        read_text(f)


def test_unreadable_file(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads everything")
    f = tmp_path / "secret"
    f.write_text("x")
    f.chmod(0)
    with pytest.raises(SafeReadError) as e:
        read_text(f)
    assert e.value.problem == "unreadable" and "permission" in e.value.reason


def test_inside_follows_symlinks_before_judging(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("s3cret")
    (root / "docs" / "ok.md").write_text("fine")
    (root / "in.md").symlink_to(root / "docs" / "ok.md")
    (root / "out.md").symlink_to(tmp_path / "secret.txt")
    assert read_text(root / "in.md", inside=root) == "fine"
    assert read_text(root / "docs" / ".." / "in.md", inside=root) == "fine"
    with pytest.raises(SafeReadError) as e:
        read_text(root / "out.md", inside=root)
    assert e.value.problem == "outside"
    with pytest.raises(SafeReadError):
        read_text(root / ".." / "secret.txt", inside=root)
    assert read_text(root / "out.md") == "s3cret"  # no root: user files may live anywhere
    assert is_inside(root / "in.md", root) and not is_inside(root / "out.md", root)
    assert is_inside(root, root) and not is_inside(tmp_path / "wsx", root)


def test_inside_a_symlinked_root(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.md").write_text("a")
    (tmp_path / "alias").symlink_to(real)
    assert read_text(tmp_path / "alias" / "a.md", inside=tmp_path / "alias") == "a"
    assert read_text(real / "a.md", inside=tmp_path / "alias") == "a"


def test_read_head_gives_the_start_of_a_larger_file_and_says_it_was_cut(tmp_path: Path) -> None:
    f = tmp_path / "log.txt"
    f.write_bytes(b"0123456789" * 10)
    assert read_head(f, 25) == (b"0123456789012345678901234", True)
    assert read_head(f, 100) == (b"0123456789" * 10, False)


def test_read_head_refuses_what_read_bytes_refuses(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "HEAD")  # nobody writes to it: a plain open() would wait forever
    (tmp_path / "zero").symlink_to("/dev/zero")
    for path in (tmp_path / "HEAD", tmp_path / "zero", tmp_path):
        with pytest.raises(SafeReadError) as e:
            read_head(path, 1 << 20)
        assert e.value.problem == "not_regular"
    with pytest.raises(SafeReadError) as e:
        read_head(tmp_path / "gone.txt", 10)
    assert e.value.missing
