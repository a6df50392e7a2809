"""groove.atomic: the one way groove replaces a file or a folder it keeps for the user."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from groove import atomic


def test_write_file_replaces_the_content_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    target.write_text("old", encoding="utf-8")
    atomic.write_file(target, "new ✓")
    atomic.write_file(tmp_path / "raw.bin", b"\x00\x01")
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert (tmp_path / "raw.bin").read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raw.bin", "result.json"]


def test_a_failed_rename_keeps_the_old_file_and_removes_the_temporary_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "summary.md"
    target.write_text("old", encoding="utf-8")

    def broken_replace(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space left"):
        atomic.write_file(target, "new")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.md"]


def test_concurrent_writers_use_distinct_temporary_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two writers of one file never share a temporary file (the old runner used `.tmp`)."""
    target = tmp_path / "result.json"
    seen: list[str] = []
    real_replace = os.replace

    def recording_replace(src: str, dst: str) -> None:
        seen.append(Path(src).name)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", recording_replace)
    atomic.write_file(target, "a")
    atomic.write_file(target, "b")
    assert len(set(seen)) == 2
    assert all(name.startswith("result.json.") and name.endswith(".tmp") for name in seen)


def test_remove_stale_temps_clears_only_this_files_leftovers(tmp_path: Path) -> None:
    target = tmp_path / "h.json"
    (tmp_path / "h.json.abc.tmp").write_text("half", encoding="utf-8")
    (tmp_path / "other.json.abc.tmp").write_text("keep", encoding="utf-8")
    atomic.remove_stale_temps(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.json.abc.tmp"]


def test_replace_folder_publishes_a_complete_folder_over_an_old_one(tmp_path: Path) -> None:
    target = tmp_path / "model"
    target.mkdir()
    (target / "old.txt").write_text("old", encoding="utf-8")
    tmp = atomic.temp_folder(target)
    assert tmp.name.startswith(atomic.stale_folder_prefix(target))
    (tmp / "model.onnx").write_bytes(b"graph")
    atomic.replace_folder(tmp, target)
    assert [p.name for p in target.iterdir()] == ["model.onnx"]
    assert [p.name for p in tmp_path.iterdir()] == ["model"]


def test_a_new_file_gets_the_umask_mode_and_a_replaced_file_keeps_its_mode(tmp_path):
    import os
    import stat

    from groove.atomic import write_file

    umask = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.json"
        write_file(fresh, "{}")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644

        kept = tmp_path / "kept.json"
        kept.write_text("old")
        kept.chmod(0o600)
        write_file(kept, "new")
        assert kept.read_text() == "new"
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    finally:
        os.umask(umask)
