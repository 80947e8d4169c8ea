"""Moving a path a sandboxed command planted out of the workspace, never deleting it:
`$PERI_HOME/refused/<session>/<its path in the workspace>` (a clash gets `.1`, `.2`, ...).

The command may still be running and may swap a folder on the way for a link between the check
and the move, so the move walks from the workspace with folder descriptors, opening each part
with `O_NOFOLLOW` and renaming with `renameat`: a link on the way, a part on another file
system, or a destination on another file system (a rename cannot cross one) stops the move, and
the path stays where it is, for the caller to report.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
MAX_CLASHES = 1000


class NotMoved(Exception):
    """Why a path could not be moved aside (it stays in the workspace)."""


def move_aside(workspace: Path, rel: Path, refused: Path) -> Path:
    """Move `workspace/rel` to `refused/rel` (numbered on a clash); the path it went to, or
    NotMoved. `refused` is made as needed (outside the workspace, where no command writes)."""
    parts = rel.parts
    if not parts or rel.is_absolute() or any(p in ("", ".", "..") for p in parts):
        raise NotMoved(f"not a path inside the workspace: {rel}")
    top = _open_dir(workspace, None)
    device = os.fstat(top).st_dev
    src = _descend(top, parts[:-1], device)
    try:
        _check_last(src, parts[-1], device)
        try:
            refused.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as e:
            raise NotMoved(_why(e, str(refused))) from e
        base = _open_dir(refused, None)
        if os.fstat(base).st_dev != device:
            os.close(base)
            raise NotMoved(f"{refused} is on another file system than the workspace")
        dst = _descend(base, parts[:-1], device, make=True)
        try:
            name = _free_name(dst, parts[-1])
            try:
                os.rename(parts[-1], name, src_dir_fd=src, dst_dir_fd=dst)
            except OSError as e:
                raise NotMoved(_why(e)) from e
        finally:
            os.close(dst)
    finally:
        os.close(src)
    return refused.joinpath(*parts[:-1], name)


def _open_dir(path: Path | str, dir_fd: int | None) -> int:
    try:
        return os.open(path, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as e:
        if e.errno in (errno.ENOTDIR, errno.ELOOP) and _is_link(path, dir_fd):
            raise NotMoved(f"{path} is a symbolic link (not followed)") from e
        raise NotMoved(_why(e, str(path))) from e


def _is_link(path: Path | str, dir_fd: int | None) -> bool:
    try:
        return stat.S_ISLNK(os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _descend(fd: int, parts: tuple[str, ...], device: int, *, make: bool = False) -> int:
    """The folder `fd/parts...`, each part opened without following a link and on the same
    file system (made first when `make`); `fd` is closed, and so is every step on a failure."""
    for part in parts:
        try:
            if make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700, dir_fd=fd)
            child = _open_dir(part, fd)
        except OSError as e:
            raise NotMoved(_why(e, part)) from e
        finally:
            os.close(fd)
        if os.fstat(child).st_dev != device:
            os.close(child)
            raise NotMoved(f"{part} is on another file system (a mount point)")
        fd = child
    return fd


def _check_last(fd: int, name: str, device: int) -> None:
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError as e:
        raise NotMoved(_why(e, name)) from e
    if info.st_dev != device:
        raise NotMoved(f"{name} is on another file system (a mount point)")


def _free_name(fd: int, name: str) -> str:
    for n in range(MAX_CLASHES):
        candidate = name if n == 0 else f"{name}.{n}"
        try:
            os.stat(candidate, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return candidate
    raise NotMoved(f"{MAX_CLASHES} earlier copies of {name} are kept already")


def _why(e: OSError, what: str = "") -> str:
    if e.errno == errno.ELOOP:
        return f"{what or 'a part of the path'} is a symbolic link (not followed)"
    if e.errno == errno.ENOTDIR:
        return f"{what or 'a part of the path'} is not a folder"
    if e.errno == errno.EXDEV:
        return "the refused folder is on another file system"
    if e.errno == errno.EBUSY:
        return "it is a mount point (in use by a running sandboxed command)"
    text = e.strerror or str(e)
    return f"{what}: {text}" if what else text
