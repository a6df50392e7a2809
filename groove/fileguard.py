"""One guarded reader for every file groove reads from inside a knowledge base.

A KB is a folder the user may share with others, so a file found there is checked on the
handle it is read from (not on the name, which can change between look and read):

    open(path, O_NOFOLLOW | O_NONBLOCK)   a symlink in the last component fails (ELOOP)
    fstat(handle): not a regular file     -> refused (FIFO, socket, device, directory)
                   st_nlink > 1           -> refused (hard link: the other name may be outside)
                   st_size > cap          -> refused
    read at most cap + 1 bytes            -> refused if more than cap arrived (it grew)

Windows has no O_NOFOLLOW; there symlinks are not refused (deliberate: reparse points include
cloud-sync placeholders).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from groove.errors import FileRefusedError, GrooveError

_READ_BLOCK = 1 << 20
# O_NONBLOCK keeps open() from hanging on a FIFO with no writer; it is a no-op on regular files.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def too_large_reason(path: Path | str, length: int, cap: int) -> str:
    """The refusal sentence for a file over ``cap`` bytes."""
    return (
        f"{path} is {length} bytes, over the {cap} byte limit, "
        "measured on the handle it would have been read from"
    )


def not_regular_reason(path: Path | str) -> str:
    """The refusal sentence for a symlink, FIFO, socket, device or directory."""
    return (
        f"{path} is not a regular file and was skipped: something other than the note that "
        "was collected (a symlink, a device, a named pipe) was in its place when it came to "
        "be read (BU-20)."
    )


def hard_link_reason(path: Path | str) -> str:
    """The refusal sentence for a file with more than one name."""
    return (
        f"{path} has more than one name (hard link) and was skipped: groove cannot tell whether "
        "the other name is outside the knowledge base, and a hard link is how a file you "
        "cannot read gets indexed on your behalf (BU-20). Replace it with a copy if it "
        "belongs in the index."
    )


def _refuse(reason: str) -> FileRefusedError:
    return FileRefusedError(reason, reason)


def _open_no_follow(path: Path) -> int:
    try:
        return os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        # ELOOP: O_NOFOLLOW met a symlink. ENXIO: the name is a Unix socket.
        if exc.errno in (errno.ELOOP, errno.ENXIO):
            raise _refuse(not_regular_reason(path)) from exc
        raise


def _check_handle(fd: int, path: Path, cap: int) -> None:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(not_regular_reason(path))
    if st.st_nlink > 1:
        raise _refuse(hard_link_reason(path))
    if st.st_size > cap:
        raise _refuse(too_large_reason(path, st.st_size, cap))


def _read_bounded(fd: int, path: Path, cap: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while total <= cap:
        block = os.read(fd, min(_READ_BLOCK, cap + 1 - total))
        if not block:
            break
        parts.append(block)
        total += len(block)
    if total > cap:
        raise _refuse(too_large_reason(path, total, cap))
    return b"".join(parts)


def read_checked(path: Path, cap: int) -> bytes:
    """Read ``path`` (at most ``cap`` bytes) after checking the opened handle.

    Raises FileRefusedError (``reason`` = the exact refusal sentence) for a symlink in the last
    component, anything that is not a regular file, a hard link, or more than ``cap`` bytes.
    Any other OSError propagates unchanged; the caller knows which file it was reading.
    """
    fd = _open_no_follow(path)
    try:
        _check_handle(fd, path, cap)
        return _read_bounded(fd, path, cap)
    finally:
        os.close(fd)


def is_present(path: Path) -> bool:
    """Whether the *name* exists (lstat): a dangling symlink is present, ENOENT is not."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise GrooveError(
            f"could not look at {path}",
            hint=f"check the permissions of the folders above it ({exc.strerror})",
        ) from exc
    return True
