"""Every file guard, as one table: what each bad thing in each place leads to.

Places: the golden file (``<kb>/.groove-eval.yml``), the eval history
(``<kb>/.groove-eval-history.json``), ``<kb>/.grooveignore`` and a KB document
(``<kb>/ops/bad.md``). Bad things: a symlink to a good file outside the KB, a dangling
symlink, a hard link (other name outside the KB), a FIFO, a directory, a file one byte over
the cap (sparse, so it costs no disk). Expected outcomes:

    golden        refused: GoldenError ``refusing to read the golden file: <reason>``
    history       refused: HistoryError ``refusing to read the eval history: <reason>``;
                  never read as an empty history, never written over
    .grooveignore not used, with a warning naming it; its rules do not apply
    document      skipped, with a warning naming it; the rest of the KB is indexed
                  (a directory named ``bad.md`` is an ordinary folder and is walked)

Each row is checked through the library and through the CLI (``groove eval``: exit 2, empty
stdout, ``Error:``/``hint:`` on stderr; ``groove index``: exit 0 and one warning line
``groove index: warning: <reason>``). The CLI runs in-process with HashingEmbedder in place
of the model.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from helpers.hashing import HashingEmbedder

from groove.cli import cli
from groove.engine.index import build
from groove.engine.kb import SkippedFile, scan_kb
from groove.errors import GoldenError, HistoryError
from groove.golden.queries import load_golden
from groove.history.history import append_run, load_history
from groove.settings.spelling import spelled
from groove.store.db import connect

FIXTURES = Path(__file__).parent / "fixtures"
MIB = 1024 * 1024
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="symlinks and FIFOs are Unix")

GOLDEN = ".groove-eval.yml"
HISTORY = ".groove-eval-history.json"
IGNORE = ".grooveignore"
DOCUMENT = "ops/bad.md"

NOT_REGULAR = (
    "{path} is not a regular file and was skipped: something other than the note that was "
    "collected (a symlink, a device, a named pipe) was in its place when it came to be read "
    "(BU-20)."
)
HARD_LINK = (
    "{path} has more than one name (hard link) and was skipped: groove cannot tell whether "
    "the other name is outside the knowledge base, and a hard link is how a file you cannot "
    "read gets indexed on your behalf (BU-20). Replace it with a copy if it belongs in the "
    "index."
)
TOO_LARGE = (
    "{path} is {size} bytes, over the {cap} byte limit, measured on the handle it would have "
    "been read from"
)
DOC_LINK = "{rel} is a symbolic link and was skipped: groove does not follow links"
DOC_FIFO = "{rel} is a named pipe, not a regular file, and was skipped"
DOC_TOO_LARGE = "{rel} is {size} bytes, over the {cap} byte limit, and was skipped"

CAPS = {GOLDEN: MIB, HISTORY: 64 * MIB, IGNORE: 64 * 1024, DOCUMENT: 50 * MIB}
KINDS = ("symlink", "dangling-symlink", "hard-link", "fifo", "directory", "oversized")

# (place, kind) -> the reason sentence; None: not refused (a folder named bad.md is walked).
TABLE: dict[tuple[str, str], str | None] = {
    **{(place, "symlink"): NOT_REGULAR for place in (GOLDEN, HISTORY, IGNORE)},
    **{(place, "dangling-symlink"): NOT_REGULAR for place in (GOLDEN, HISTORY, IGNORE)},
    **{(place, "hard-link"): HARD_LINK for place in (GOLDEN, HISTORY, IGNORE)},
    **{(place, "fifo"): NOT_REGULAR for place in (GOLDEN, HISTORY, IGNORE)},
    **{(place, "directory"): NOT_REGULAR for place in (GOLDEN, HISTORY, IGNORE)},
    **{(place, "oversized"): TOO_LARGE for place in (GOLDEN, HISTORY, IGNORE)},
    (DOCUMENT, "symlink"): DOC_LINK,
    (DOCUMENT, "dangling-symlink"): DOC_LINK,
    (DOCUMENT, "hard-link"): HARD_LINK.replace("{path}", "{rel}"),
    (DOCUMENT, "fifo"): DOC_FIFO,
    (DOCUMENT, "directory"): None,
    (DOCUMENT, "oversized"): DOC_TOO_LARGE,
}
ROWS = [pytest.param(place, kind, id=f"{place}-{kind}") for place, kind in TABLE]


# ---- building the bad things -------------------------------------------------------------


def _history_bytes(folder: Path) -> bytes:
    from helpers.history_jobs import make_record

    path = folder / "history-source.json"
    append_run(path, make_record(1), 10)
    data = path.read_bytes()
    path.unlink()
    return data


def good_bytes(place: str, scratch: Path) -> bytes:
    """What a good file in ``place`` holds."""
    if place == GOLDEN:
        return (FIXTURES / "golden_en.yml").read_bytes()
    if place == HISTORY:
        return _history_bytes(scratch)
    if place == IGNORE:
        return b"drafts/\n"
    return b"# Bad\n\n## Section\n\nA note about rollback canary deploys, long enough to index.\n"


@dataclass(frozen=True)
class Planted:
    """A bad thing planted in a KB, with what must stay as it was."""

    path: Path
    size: int  # for the too-large sentence
    outside: Path | None  # the good file a link points to or shares its bytes with

    def unchanged(self, kind: str, before: bytes) -> bool:
        """The bad thing is still there as planted, and the good file it names is intact."""
        if kind in ("symlink", "hard-link"):
            assert self.outside is not None
            same_kind = self.path.is_symlink() if kind == "symlink" else self.path.is_file()
            return same_kind and self.outside.read_bytes() == before
        if kind == "oversized":
            return self.path.stat().st_size == self.size
        checks = {
            "dangling-symlink": lambda: self.path.is_symlink() and not self.path.exists(),
            "fifo": self.path.is_fifo,
            "directory": self.path.is_dir,
        }
        return bool(checks[kind]())


def plant(kb: Path, place: str, kind: str, scratch: Path) -> tuple[Planted, bytes]:
    path = kb / place
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    good = good_bytes(place, scratch)
    outside = scratch / ("outside-" + path.name)
    size = 0
    if kind == "symlink":
        outside.write_bytes(good)
        path.symlink_to(outside)
    elif kind == "dangling-symlink":
        path.symlink_to(scratch / "nowhere")
    elif kind == "hard-link":
        path.write_bytes(good)
        os.link(path, outside)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
        (path / "inside.md").write_bytes(good_bytes(DOCUMENT, scratch))
    else:
        path.write_bytes(good)
        size = CAPS[place] + 1
        os.truncate(path, size)  # sparse: no disk used
    return Planted(path, size, outside if kind in ("symlink", "hard-link") else None), good


def reason(place: str, kind: str, planted: Planted) -> str | None:
    template = TABLE[(place, kind)]
    if template is None:
        return None
    return template.format(path=planted.path, rel=place, size=planted.size, cap=CAPS[place])


# ---- fixtures ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kb_en indexed with HashingEmbedder; tests copy the folder (KB and database)."""
    root = tmp_path_factory.mktemp("guards")
    shutil.copytree(FIXTURES / "kb_en", root / "kb")
    (root / "kb" / GOLDEN).write_bytes((FIXTURES / "golden_en.yml").read_bytes())
    build(root / "kb", HashingEmbedder())
    return root


@pytest.fixture
def kb(indexed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    shutil.copytree(indexed, tmp_path / "root")
    monkeypatch.setattr("groove.engine.session.load_embedder", lambda *a, **k: HashingEmbedder())
    yield tmp_path / "root" / "kb"


def groove(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def indexed_paths(kb: Path) -> set[str]:
    conn = connect(kb.parent / ".groove.db")
    try:
        return {row[0] for row in conn.execute("SELECT path FROM documents")}
    finally:
        conn.close()


# ---- the library -------------------------------------------------------------------------


def _golden(kb: Path, expected: str | None, planted: Planted) -> None:
    with pytest.raises(GoldenError) as info:
        load_golden(planted.path)
    message, hint = spelled(info.value, "api")  # the API's words
    assert message == f"refusing to read the golden file: {expected}"
    assert hint == "point golden= at a regular file (a copy, not a link) up to 1 MiB"


def _history(kb: Path, expected: str | None, planted: Planted) -> None:
    from helpers.history_jobs import make_record

    # an eval's save can leave the history off; a reader like groove.load_history cannot
    move, skip = "move it aside to start a new history", "pass history=False to skip the history"
    attempts = (
        (lambda: load_history(planted.path), move),
        (lambda: append_run(planted.path, make_record(2), 10), skip),
    )
    for attempt, way_out in attempts:
        with pytest.raises(HistoryError) as info:
            attempt()
        message, hint = spelled(info.value, "api")  # the API's words
        assert message == f"refusing to read the eval history: {expected}"
        assert hint == f"replace it with a regular file, or {way_out}"


def _ignore(kb: Path, expected: str | None, planted: Planted) -> None:
    scan = scan_kb(kb)
    assert scan.warnings == (f".grooveignore was not used: {expected}",)
    assert "drafts/secret.md" in {f.rel_path for f in scan.files}  # its rule did not apply


def _document(kb: Path, expected: str | None, planted: Planted) -> None:
    scan = scan_kb(kb)
    listed = {f.rel_path for f in scan.files}
    if expected is None:  # a folder named bad.md is walked like any folder
        assert scan.skipped == ()
        assert f"{DOCUMENT}/inside.md" in listed
        return
    assert scan.skipped == (SkippedFile(DOCUMENT, expected),)
    assert DOCUMENT not in listed and "ops/rollback.md" in listed
    summary = build(kb, HashingEmbedder())
    assert summary.skipped == (SkippedFile(DOCUMENT, expected),)


LIBRARY: dict[str, Callable[[Path, str | None, Planted], None]] = {
    GOLDEN: _golden, HISTORY: _history, IGNORE: _ignore, DOCUMENT: _document,
}  # fmt: skip


@pytest.mark.parametrize(("place", "kind"), ROWS)
def test_the_library_refuses_or_skips_with_the_reason(
    place: str, kind: str, kb: Path, tmp_path: Path
) -> None:
    planted, good = plant(kb, place, kind, tmp_path)
    LIBRARY[place](kb, reason(place, kind, planted), planted)
    assert planted.unchanged(kind, good)


# ---- the command line --------------------------------------------------------------------


def _eval_refused(kb: Path, message: str, hint: str) -> None:
    result = groove("eval", "--kb-path", str(kb))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"Error: {message}\nhint: {hint}\n"


def _index_warns(kb: Path, line: str | None) -> Result:
    result = groove("index", "--kb-path", str(kb), "--quiet")
    assert result.exit_code == 0, result.output
    assert result.stderr == ("" if line is None else f"groove index: warning: {line}\n")
    return result


@pytest.mark.parametrize(("place", "kind"), ROWS)
def test_the_cli_refuses_or_warns_with_the_reason(
    place: str, kind: str, kb: Path, tmp_path: Path
) -> None:
    planted, good = plant(kb, place, kind, tmp_path)
    expected = reason(place, kind, planted)
    if place == GOLDEN:
        assert expected is not None
        _eval_refused(
            kb,
            f"refusing to read the golden file: {expected}",
            "point --golden at a regular file (a copy, not a link) up to 1 MiB",
        )
    elif place == HISTORY:
        assert expected is not None
        _eval_refused(
            kb,
            f"refusing to read the eval history: {expected}",
            "replace it with a regular file, or pass --no-history to skip the history",
        )
        # --no-history never looks at the file, so the run goes ahead
        assert groove("eval", "--kb-path", str(kb), "--no-history").exit_code == 0
    elif place == IGNORE:
        _index_warns(kb, f".grooveignore was not used: {expected}")
        assert "drafts/secret.md" in indexed_paths(kb)
    else:
        _index_warns(kb, expected)
        paths = indexed_paths(kb)
        assert DOCUMENT not in paths and "ops/rollback.md" in paths
        if expected is None:
            assert f"{DOCUMENT}/inside.md" in paths
    assert planted.unchanged(kind, good)
