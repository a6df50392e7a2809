"""Atomic writes: a reader (or a crash) sees the old file or folder, or the new one, never a mix.

Every file groove writes for a user to keep goes through ``write_file`` (or ``write_stream``
for one written piece by piece): the eval history, the runner's result.json and summary.md,
a saved tune result, the index's vector copy. The recipe:

    mkstemp in the same folder     unique name ``<name>.<random>.tmp``, so two writers never
                                   share a temporary file and the rename stays in one file
                                   system
    write, flush, fsync            the bytes are on disk before the name points at them
    os.replace over the target     atomic on POSIX and Windows
    fsync the folder               the rename itself survives a power cut (POSIX)

A failure removes the temporary file and raises the ``OSError`` for the caller to translate.
A writer killed mid-write leaves its temporary file behind; ``remove_stale_temps`` clears
them, and is only safe for a caller that holds a lock no other writer of ``path`` bypasses.

Folders (the prepared model) are built under ``temp_folder`` and published with
``replace_folder``: every file and the folder fsynced, then renamed into place.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from groove.errors import GrooveError

TEMP_SUFFIX = ".tmp"


def write_file(path: Path, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` (str is written as UTF-8) atomically and durably."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    write_stream(path, lambda handle: handle.write(payload))


def write_stream(path: Path, fill: Callable[[BinaryIO], object]) -> None:
    """Replace ``path`` with what ``fill(handle)`` writes, atomically and durably: the same
    recipe as ``write_file`` for a file too large to hold in memory at once."""
    fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        # mkstemp makes the file owner-only; the result must read like any file the user
        # writes (CI uploads it, a teammate opens it), so take the old file's mode or the umask's.
        os.fchmod(fd, _plain_mode(path))
        with os.fdopen(fd, "wb") as handle:
            fill(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_folder(path.parent)


def check_folder(path: Path, what: str = "") -> None:
    """A file to write into a folder that is not there is bad input, refused before anything
    is written: groove creates no folder a typo named (``what`` names the file, e.g.
    "the JUnit report ")."""
    if path.parent.is_dir():
        return
    missing = errno.ENOTDIR if path.parent.exists() else errno.ENOENT
    raise GrooveError(
        f"cannot write {what}{path}: {os.strerror(missing)}",
        "check the folder and its permissions",
    )


def _plain_mode(path: Path) -> int:
    """The mode ``path`` has now, else the one ``open(path, "w")`` would give it."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def remove_stale_temps(path: Path) -> None:
    """Delete the temporary files writers of ``path`` left when they were killed.

    Best effort: a leftover that cannot be removed costs disk space, not data.
    """
    for stale in path.parent.glob(glob.escape(_temp_prefix(path)) + "*" + TEMP_SUFFIX):
        with contextlib.suppress(OSError):
            stale.unlink()


def fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX); harmless where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def temp_folder(target: Path) -> Path:
    """A new empty folder beside ``target`` (``.<name>.tmp-<random>``) to build it in."""
    tmp = Path(tempfile.mkdtemp(prefix=stale_folder_prefix(target), dir=target.parent))
    tmp.chmod(0o755)  # mkdtemp makes it owner-only; the published folder is a plain one
    return tmp


def stale_folder_prefix(target: Path) -> str:
    """The name prefix of ``target``'s temporary folders (for a lock holder to clear)."""
    return f".{target.name}.tmp-"


def replace_folder(tmp: Path, target: Path) -> None:
    """Publish the folder ``tmp`` as ``target``: a reader sees the old folder, none, or the new.

    Every file in ``tmp`` and ``tmp`` itself are fsynced first, the parent folder after.
    """
    for item in [*tmp.iterdir(), tmp]:
        fd = os.open(item, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    if target.exists():
        retired = Path(
            tempfile.mkdtemp(prefix=f"{stale_folder_prefix(target)}old-", dir=tmp.parent)
        )
        target.rename(retired / target.name)
        tmp.rename(target)
        shutil.rmtree(retired, ignore_errors=True)
    else:
        tmp.rename(target)
    fsync_folder(target.parent)


def _temp_prefix(path: Path) -> str:
    return path.name + "."
