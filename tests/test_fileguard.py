"""The guarded reader: every refusal with its exact sentence, and presence by name."""

from __future__ import annotations

import errno
import os
import socket
import sys
from pathlib import Path

import pytest

from groove.errors import FileRefusedError, GrooveError
from groove.fileguard import is_present, read_checked

unix_only = pytest.mark.skipif(sys.platform == "win32", reason="O_NOFOLLOW and FIFOs are Unix")


def _not_regular(path: Path) -> str:
    return (
        f"{path} is not a regular file and was skipped: something other than the note that was "
        "collected (a symlink, a device, a named pipe) was in its place when it came to be "
        "read (BU-20)."
    )


def _refusal(path: Path, cap: int) -> FileRefusedError:
    with pytest.raises(FileRefusedError) as info:
        read_checked(path, cap)
    assert info.value.message == info.value.reason
    return info.value


def test_reads_a_regular_file_up_to_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "note.md"
    path.write_bytes(b"x" * 10)
    assert read_checked(path, 10) == b"x" * 10


def test_reads_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.md"
    path.write_bytes(b"")
    assert read_checked(path, 0) == b""


def test_refuses_a_file_one_byte_over_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_bytes(b"x" * 11)
    err = _refusal(path, 10)
    assert err.reason == (
        f"{path} is 11 bytes, over the 10 byte limit, measured on the handle it would have "
        "been read from"
    )


def test_refuses_bytes_beyond_the_cap_that_fstat_did_not_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file that grows between fstat and read: the bounded read catches it.
    path = tmp_path / "growing.md"
    path.write_bytes(b"x" * 25)
    real_fstat = os.fstat

    def shrunk_fstat(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        fields = list(st)
        fields[6] = 5  # st_size
        return os.stat_result(fields)

    monkeypatch.setattr("groove.fileguard.os.fstat", shrunk_fstat)
    err = _refusal(path, 10)
    assert err.reason == (
        f"{path} is 11 bytes, over the 10 byte limit, measured on the handle it would have "
        "been read from"
    )


@unix_only
def test_refuses_a_symlink_even_to_a_good_file(tmp_path: Path) -> None:
    target = tmp_path / "real.md"
    target.write_text("hello", encoding="utf-8")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    assert _refusal(link, 100).reason == _not_regular(link)


@unix_only
def test_refuses_a_dangling_symlink_as_not_regular(tmp_path: Path) -> None:
    link = tmp_path / "dangling.md"
    link.symlink_to(tmp_path / "nowhere.md")
    assert _refusal(link, 100).reason == _not_regular(link)


def test_refuses_a_hard_link(tmp_path: Path) -> None:
    first = tmp_path / "a.md"
    first.write_text("hello", encoding="utf-8")
    second = tmp_path / "b.md"
    os.link(first, second)
    assert _refusal(first, 100).reason == (
        f"{first} has more than one name (hard link) and was skipped: groove cannot tell "
        "whether the other name is outside the knowledge base, and a hard link is how a file "
        "you cannot read gets indexed on your behalf (BU-20). Replace it with a copy if it "
        "belongs in the index."
    )


@unix_only
def test_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    assert _refusal(fifo, 100).reason == _not_regular(fifo)


def test_refuses_a_directory(tmp_path: Path) -> None:
    folder = tmp_path / "folder.md"
    folder.mkdir()
    assert _refusal(folder, 100).reason == _not_regular(folder)


@unix_only
def test_refuses_a_unix_socket(tmp_path: Path) -> None:
    path = tmp_path / "s.md"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        assert _refusal(path, 100).reason == _not_regular(path)
    finally:
        server.close()


@unix_only
def test_refuses_a_character_device() -> None:
    assert _refusal(Path("/dev/null"), 100).reason == _not_regular(Path("/dev/null"))


def test_a_hard_link_check_comes_after_the_file_type_check(tmp_path: Path) -> None:
    # A directory always has st_nlink >= 2; it must read as "not a regular file".
    folder = tmp_path / "d"
    (folder / "sub").mkdir(parents=True)
    assert _refusal(folder, 100).reason == _not_regular(folder)


def test_a_missing_file_raises_the_os_error_unchanged(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        read_checked(tmp_path / "missing.md", 100)
    assert info.value.errno == errno.ENOENT


def test_is_present_for_a_file_and_a_missing_name(tmp_path: Path) -> None:
    path = tmp_path / "x.yml"
    assert is_present(path) is False
    path.write_text("", encoding="utf-8")
    assert is_present(path) is True


@unix_only
def test_is_present_counts_a_dangling_symlink(tmp_path: Path) -> None:
    link = tmp_path / "golden.yml"
    link.symlink_to(tmp_path / "gone.yml")
    assert is_present(link) is True


def test_is_present_reports_other_lstat_errors(tmp_path: Path) -> None:
    # ENOTDIR: a path component is a file.
    file = tmp_path / "file"
    file.write_text("", encoding="utf-8")
    with pytest.raises(GrooveError) as info:
        is_present(file / "child")
    assert info.value.message == f"could not look at {file / 'child'}"
    assert type(info.value) is GrooveError
