"""Walking the knowledge base (spec §D): what is listed, what is skipped and why, and the
fixture KBs every other test indexes."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
import yaml

from groove.engine import kb as kb_module
from groove.engine.chunking import parse_markdown
from groove.engine.kb import (
    DEFAULT_EXCLUDE_DIRS,
    MAX_DOCUMENT_BYTES,
    KbFile,
    SkippedFile,
    content_hash,
    read_document,
    scan_kb,
)
from groove.errors import FileRefusedError, KnowledgeBaseError
from groove.settings.spelling import spelled

FIXTURES = Path(__file__).parent / "fixtures"
unix_only = pytest.mark.skipif(sys.platform == "win32", reason="symlinks and FIFOs need Unix")


def write(root: Path, rel: str, text: str = "note\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def listed(root: Path, exclude_dirs: list[str] | None = None) -> list[str]:
    return [f.rel_path for f in scan_kb(root, exclude_dirs).files]


# ---- the KB path -------------------------------------------------------------------------


def test_missing_kb_is_a_knowledge_base_error(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseError) as info:
        scan_kb(tmp_path / "nope")
    message, hint = spelled(info.value, "api")  # the API's words
    assert message == f"knowledge base not found: {tmp_path / 'nope'}"
    assert hint == "pass kb_path= with the folder that holds your Markdown notes"


def test_a_file_is_not_a_kb(tmp_path: Path) -> None:
    path = write(tmp_path, "notes.md")
    with pytest.raises(KnowledgeBaseError) as info:
        scan_kb(path)
    message, hint = spelled(info.value, "api")  # the API's words
    assert message == f"knowledge base is not a folder: {path}"
    assert hint == "keyword kb_path takes the folder that holds your Markdown notes, not a file"


@unix_only
def test_the_kb_path_itself_may_be_a_symlink(tmp_path: Path) -> None:
    write(tmp_path / "real", "a.md")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    scan = scan_kb(tmp_path / "link")
    assert [(f.rel_path, f.path) for f in scan.files] == [("a.md", tmp_path / "link" / "a.md")]


def test_an_unlistable_kb_root_is_a_knowledge_base_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(path: object) -> object:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(kb_module.os, "scandir", denied)
    with pytest.raises(KnowledgeBaseError) as info:
        scan_kb(tmp_path)
    assert info.value.message == (
        f"could not list the knowledge base {tmp_path} (Permission denied)"
    )


# ---- which files -------------------------------------------------------------------------


def test_only_markdown_files_sorted_by_rel_path(tmp_path: Path) -> None:
    for rel in ["b.md", "a-b.md", "a/b.md", "a/z/c.MD", "notes.txt", "x.markdown", "md"]:
        write(tmp_path, rel)
    scan = scan_kb(tmp_path)
    assert [f.rel_path for f in scan.files] == ["a-b.md", "a/b.md", "a/z/c.MD", "b.md"]
    assert scan.skipped == ()
    assert scan.warnings == ()


def test_kb_file_carries_absolute_path_and_size(tmp_path: Path) -> None:
    write(tmp_path, "dir/ノート.md", "こんにちは")
    assert scan_kb(tmp_path).files == (
        KbFile("dir/ノート.md", tmp_path.absolute() / "dir" / "ノート.md", 15),
    )


def test_office_lock_files_are_silent(tmp_path: Path) -> None:
    for rel in ["~$report.md", ".~lock.notes.md#", "keep.md", "sub/~$x.md"]:
        write(tmp_path, rel)
    scan = scan_kb(tmp_path)
    assert [f.rel_path for f in scan.files] == ["keep.md"]
    assert scan.skipped == ()


def test_hidden_files_and_folders_are_walked(tmp_path: Path) -> None:
    write(tmp_path, ".notes/a.md")
    write(tmp_path, ".b.md")
    assert listed(tmp_path) == [".b.md", ".notes/a.md"]


@unix_only
def test_a_name_that_is_not_utf8_is_skipped(tmp_path: Path) -> None:
    fd = os.open(os.fsencode(tmp_path) + b"/bad\xff.md", os.O_CREAT | os.O_WRONLY, 0o644)
    os.close(fd)
    write(tmp_path, "good.md")
    scan = scan_kb(tmp_path)
    assert [f.rel_path for f in scan.files] == ["good.md"]
    assert scan.skipped == (
        SkippedFile(
            "bad\\xff.md", "bad\\xff.md has a name that is not valid UTF-8 and was skipped"
        ),
    )


# ---- excluded folders --------------------------------------------------------------------


def test_default_exclude_dirs() -> None:
    assert DEFAULT_EXCLUDE_DIRS == (
        ".obsidian",
        ".git",
        "node_modules",
        "target",
        ".vscode",
        ".idea",
    )


def test_default_excluded_folders_are_silent(tmp_path: Path) -> None:
    for d in (*DEFAULT_EXCLUDE_DIRS, ".svn", "sub/target", "TARGET"):
        write(tmp_path, f"{d}/x.md")
    write(tmp_path, "keep.md")
    scan = scan_kb(tmp_path)
    assert [f.rel_path for f in scan.files] == ["keep.md"]
    assert scan.skipped == ()


def test_a_configured_list_replaces_the_defaults_but_not_the_hard_coded_dirs(
    tmp_path: Path,
) -> None:
    for d in [".git", ".SVN", "Node_Modules", ".obsidian", "target", "Archive", "sub/archive"]:
        write(tmp_path, f"{d}/x.md")
    assert listed(tmp_path, ["archive"]) == [".obsidian/x.md", "target/x.md"]


def test_an_empty_list_keeps_only_the_hard_coded_exclusions(tmp_path: Path) -> None:
    for d in [".git", ".obsidian", "node_modules"]:
        write(tmp_path, f"{d}/x.md")
    assert listed(tmp_path, []) == [".obsidian/x.md"]


def test_exclude_dirs_compare_unicode_case_folded(tmp_path: Path) -> None:
    write(tmp_path, "ΑΡΧΕΊΟΣ/x.md")  # upper case; the folded form ends in a plain sigma
    write(tmp_path, "other/x.md")
    assert listed(tmp_path, ["αρχείος"]) == ["other/x.md"]


def test_exclude_dirs_apply_to_folders_not_files(tmp_path: Path) -> None:
    write(tmp_path, "target.md")
    assert listed(tmp_path, ["target.md"]) == ["target.md"]


# ---- .grooveignore -----------------------------------------------------------------------


def _ignore(root: Path, text: str | bytes) -> None:
    data = text.encode("utf-8") if isinstance(text, str) else text
    (root / ".grooveignore").write_bytes(data)


def test_grooveignore_folder_rule_and_no_reinclusion_below_it(tmp_path: Path) -> None:
    for rel in ["drafts/a.md", "drafts/keep.md", "notes/drafts/b.md", "drafts.md", "c.md"]:
        write(tmp_path, rel)
    _ignore(tmp_path, "# drafts stay out\ndrafts/\n!drafts/keep.md\n")
    scan = scan_kb(tmp_path)
    assert [f.rel_path for f in scan.files] == ["c.md", "drafts.md"]
    assert scan.skipped == ()
    assert scan.warnings == ()


def test_grooveignore_negation_reincludes_files(tmp_path: Path) -> None:
    for rel in ["a.tmp.md", "keep.tmp.md", "sub/b.tmp.md", "real.md"]:
        write(tmp_path, rel)
    _ignore(tmp_path, "*.tmp.md\n!keep.tmp.md\n")
    assert listed(tmp_path) == ["keep.tmp.md", "real.md"]


def test_grooveignore_children_of_a_starred_folder_can_be_reincluded(tmp_path: Path) -> None:
    for rel in ["drafts/a.md", "drafts/keep.md"]:
        write(tmp_path, rel)
    _ignore(tmp_path, "drafts/*\n!drafts/keep.md\n")
    assert listed(tmp_path) == ["drafts/keep.md"]


def test_grooveignore_anchored_and_double_star_patterns(tmp_path: Path) -> None:
    for rel in ["top.md", "sub/top.md", "a/tmp/x.md", "a/b/tmp/y.md", "tmp.md"]:
        write(tmp_path, rel)
    _ignore(tmp_path, "/top.md\n**/tmp/\n")
    assert listed(tmp_path) == ["sub/top.md", "tmp.md"]


def test_grooveignore_matches_case_insensitively(tmp_path: Path) -> None:
    for rel in ["PRIVATE/a.md", "Secret.MD", "open.md"]:
        write(tmp_path, rel)
    _ignore(tmp_path, "private/\nsecret.md\n")
    assert listed(tmp_path) == ["open.md"]


def test_grooveignore_bom_and_crlf(tmp_path: Path) -> None:
    write(tmp_path, "a.md")
    write(tmp_path, "b.md")
    _ignore(tmp_path, "\ufeffa.md\r\n# comment\r\n")
    assert listed(tmp_path) == ["b.md"]


def test_grooveignore_in_a_subfolder_is_not_read(tmp_path: Path) -> None:
    write(tmp_path, "sub/a.md")
    _ignore(tmp_path / "sub", "a.md\n")
    assert listed(tmp_path) == ["sub/a.md"]


def test_grooveignore_too_large_is_a_warning_and_no_rules(tmp_path: Path) -> None:
    write(tmp_path, "a.md")
    _ignore(tmp_path, "a.md\n" + "#" * (64 * 1024))
    scan = scan_kb(tmp_path)
    assert [f.rel_path for f in scan.files] == ["a.md"]
    path = tmp_path.absolute() / ".grooveignore"
    assert scan.warnings == (
        f".grooveignore was not used: {path} is {64 * 1024 + 5} bytes, over the 65536 byte "
        "limit, measured on the handle it would have been read from",
    )


def test_grooveignore_with_too_many_patterns_is_ignored(tmp_path: Path) -> None:
    write(tmp_path, "a.md")
    _ignore(tmp_path, "# comments do not count\n\n" + "a.md\n" * 1001)
    scan = scan_kb(tmp_path)
    assert [f.rel_path for f in scan.files] == ["a.md"]
    assert scan.warnings == (
        ".grooveignore has 1001 patterns, over the limit of 1000; it was ignored",
    )


def test_grooveignore_with_exactly_1000_patterns_is_used(tmp_path: Path) -> None:
    write(tmp_path, "a.md")
    _ignore(tmp_path, "a.md\n" * 1000)
    assert listed(tmp_path) == []


def test_grooveignore_not_utf8_is_a_warning(tmp_path: Path) -> None:
    write(tmp_path, "a.md")
    _ignore(tmp_path, b"a.md\n\xff\n")
    scan = scan_kb(tmp_path)
    assert [f.rel_path for f in scan.files] == ["a.md"]
    assert scan.warnings == (".grooveignore was not used: it is not valid UTF-8 text",)


def test_grooveignore_invalid_line_is_skipped_and_the_rest_applies(tmp_path: Path) -> None:
    write(tmp_path, "a.md")
    write(tmp_path, "b.md")
    _ignore(tmp_path, "!\na.md\n")
    scan = scan_kb(tmp_path)
    assert [f.rel_path for f in scan.files] == ["b.md"]
    assert scan.warnings == (".grooveignore line 1: '!' is not a valid pattern; skipped",)


@unix_only
def test_a_symlinked_grooveignore_is_refused_with_a_warning(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    write(kb, "a.md")
    (kb / ".grooveignore").symlink_to(write(tmp_path, "outside/rules", "a.md\n"))
    scan = scan_kb(kb)
    assert [f.rel_path for f in scan.files] == ["a.md"]
    path = kb.absolute() / ".grooveignore"
    assert scan.warnings == (
        f".grooveignore was not used: {path} is not a regular file and was skipped: something "
        "other than the note that was collected (a symlink, a device, a named pipe) was in "
        "its place when it came to be read (BU-20).",
    )


# ---- skipped with a reason ---------------------------------------------------------------


@unix_only
def test_symlinked_file_and_folder_are_skipped_with_a_reason(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    outside = tmp_path / "outside"
    write(outside, "secret.md")
    write(kb, "real.md")
    (kb / "link.md").symlink_to(outside / "secret.md")
    (kb / "folder").symlink_to(outside)
    (kb / "dangling.md").symlink_to(tmp_path / "gone.md")
    (kb / "data.json").symlink_to(outside / "secret.md")  # not Markdown: silent
    scan = scan_kb(kb)
    assert [f.rel_path for f in scan.files] == ["real.md"]
    assert scan.skipped == (
        SkippedFile(
            "dangling.md",
            "dangling.md is a symbolic link and was skipped: groove does not follow links",
        ),
        SkippedFile(
            "folder",
            "folder/ is a symbolic link to a folder and was skipped: groove does not follow links",
        ),
        SkippedFile(
            "link.md", "link.md is a symbolic link and was skipped: groove does not follow links"
        ),
    )


@unix_only
def test_ignored_or_excluded_symlinks_are_silent(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    write(tmp_path, "outside/x.md")
    write(kb, "real.md")
    (kb / "target").symlink_to(tmp_path / "outside")
    (kb / "old.md").symlink_to(tmp_path / "outside/x.md")
    _ignore(kb, "old.md\n")
    scan = scan_kb(kb)
    assert [f.rel_path for f in scan.files] == ["real.md"]
    assert scan.skipped == ()


def test_hard_linked_files_are_skipped_with_the_reason(tmp_path: Path) -> None:
    write(tmp_path, "a.md")
    os.link(tmp_path / "a.md", tmp_path / "b.md")
    scan = scan_kb(tmp_path)
    assert scan.files == ()
    assert [s.rel_path for s in scan.skipped] == ["a.md", "b.md"]
    assert scan.skipped[0].reason == (
        "a.md has more than one name (hard link) and was skipped: groove cannot tell whether "
        "the other name is outside the knowledge base, and a hard link is how a file you "
        "cannot read gets indexed on your behalf (BU-20). Replace it with a copy if it "
        "belongs in the index."
    )


@unix_only
def test_a_fifo_is_skipped_with_a_reason(tmp_path: Path) -> None:
    os.mkdir(tmp_path / "sub")
    os.mkfifo(tmp_path / "sub" / "pipe.md")
    scan = scan_kb(tmp_path)
    assert scan.skipped == (
        SkippedFile(
            "sub/pipe.md", "sub/pipe.md is a named pipe, not a regular file, and was skipped"
        ),
    )


def test_a_file_over_the_cap_is_skipped_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert MAX_DOCUMENT_BYTES == 50 * 1024 * 1024
    monkeypatch.setattr(kb_module, "MAX_DOCUMENT_BYTES", 10)
    write(tmp_path, "small.md", "x" * 10)
    write(tmp_path, "big.md", "x" * 11)
    scan = scan_kb(tmp_path)
    assert [f.rel_path for f in scan.files] == ["small.md"]
    assert scan.skipped == (
        SkippedFile("big.md", "big.md is 11 bytes, over the 10 byte limit, and was skipped"),
    )


def test_an_unlistable_folder_is_skipped_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tests may run as root, which chmod cannot lock out; fail the listing instead.
    write(tmp_path, "locked/a.md")
    write(tmp_path, "open/b.md")
    real_scandir = os.scandir

    def scandir(path: str | Path) -> object:
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(kb_module.os, "scandir", scandir)
    scan = scan_kb(tmp_path)
    assert [f.rel_path for f in scan.files] == ["open/b.md"]
    assert scan.skipped == (
        SkippedFile("locked", "locked/ could not be listed (Permission denied) and was skipped"),
    )


# ---- reading -----------------------------------------------------------------------------


def test_read_document_returns_text_and_raw_bytes(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "\ufeff# 見出し\n")
    (f,) = scan_kb(tmp_path).files
    text, raw = read_document(f)
    assert raw == "\ufeff# 見出し\n".encode()
    assert text == "\ufeff# 見出し\n"


def test_read_document_refuses_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "latin1.md").write_bytes("café".encode("latin-1"))
    (f,) = scan_kb(tmp_path).files
    with pytest.raises(FileRefusedError) as info:
        read_document(f)
    assert info.value.reason == (
        "latin1.md is not valid UTF-8 text and was skipped: groove reads Markdown as UTF-8"
    )
    assert info.value.message == info.value.reason


@unix_only
def test_read_document_refuses_a_file_swapped_for_a_symlink_after_the_walk(
    tmp_path: Path,
) -> None:
    kb = tmp_path / "kb"
    path = write(kb, "a.md")
    (f,) = scan_kb(kb).files
    path.unlink()
    path.symlink_to(write(tmp_path, "outside/x.md"))
    with pytest.raises(FileRefusedError) as info:
        read_document(f)
    assert info.value.reason.startswith(f"{f.path} is not a regular file and was skipped: ")


def test_content_hash_is_lowercase_hex_sha256() -> None:
    assert content_hash(b"abc") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )


# ---- the fixture knowledge bases ---------------------------------------------------------

EN_FILES = [
    "data/backup.md",
    "data/restore.md",
    "ops/canary.md",
    "ops/rollback.md",
    "search/chunking.md",
    "search/reranking.md",
    "search/rrf.md",
    "team/oncall.md",
    "team/postmortem.md",
]
JA_FILES = [
    "en/embeddings.md",
    "en/rrf.md",
    "search/チャンク分割.md",
    "search/再ランキング.md",
    "データ/バックアップ.md",
    "データ/復元.md",
    "運用/カナリアリリース.md",
    "運用/ロールバック.md",
]


def _headings_by_path(kb: Path) -> dict[str, list[str | None]]:
    headings = {}
    for f in scan_kb(kb).files:
        text, _ = read_document(f)
        doc = parse_markdown(text, f.rel_path)
        assert doc.warnings == ()
        headings[f.rel_path] = [c.heading for c in doc.chunks]
    return headings


@pytest.mark.parametrize(
    ("kb", "files", "chunks"), [("kb_en", EN_FILES, 33), ("kb_ja", JA_FILES, 27)]
)
def test_fixture_kb_lists_its_notes_and_ignores_drafts(
    kb: str, files: list[str], chunks: int
) -> None:
    scan = scan_kb(FIXTURES / kb)
    assert [f.rel_path for f in scan.files] == files
    assert scan.skipped == ()
    assert scan.warnings == ()
    assert sum(len(h) for h in _headings_by_path(FIXTURES / kb).values()) == chunks


def test_kb_en_drafts_exist_but_are_ignored() -> None:
    assert (FIXTURES / "kb_en" / "drafts" / "secret.md").is_file()
    assert "drafts/secret.md" not in listed(FIXTURES / "kb_en")


def test_kb_en_oncall_has_nested_sections() -> None:
    text = (FIXTURES / "kb_en" / "team" / "oncall.md").read_text(encoding="utf-8")
    doc = parse_markdown(text, "team/oncall.md")
    assert doc.title == "On-call handbook"
    assert doc.tags == ("team", "oncall")
    assert [(c.heading, c.level, c.context) for c in doc.chunks] == [
        (None, None, "On-call handbook"),
        ("Paging", 2, "On-call handbook > Paging"),
        ("Acknowledging a page", 3, "On-call handbook > Paging > Acknowledging a page"),
        ("Quiet hours", 3, "On-call handbook > Paging > Quiet hours"),
        ("Handover", 2, "On-call handbook > Handover"),
    ]


@pytest.mark.parametrize(
    ("kb", "golden"),
    [("kb_en", "golden_en.yml"), ("kb_ja", "golden_ja.yml"), ("kb_ja", "golden_ja_mixed.yml")],
)
def test_golden_answers_exist_in_the_fixture_kb(kb: str, golden: str) -> None:
    headings = _headings_by_path(FIXTURES / kb)
    queries = yaml.safe_load((FIXTURES / golden).read_text(encoding="utf-8"))["queries"]
    assert 6 <= len(queries) <= 10
    assert len({q["id"] for q in queries}) == len(queries)
    with_heading = 0
    for q in queries:
        assert set(q) == {"id", "query", "expected"}
        for e in q["expected"]:
            assert e["path"] in headings, e["path"]
            if "heading" in e:
                with_heading += 1
                assert e["heading"] in headings[e["path"]], (q["id"], e["heading"])
    assert with_heading >= 1


@pytest.mark.parametrize(
    ("kb", "golden"),
    [("kb_en", "golden_en.yml"), ("kb_ja", "golden_ja.yml"), ("kb_ja", "golden_ja_mixed.yml")],
)
def test_no_fixture_note_quotes_a_golden_query(kb: str, golden: str) -> None:
    queries = yaml.safe_load((FIXTURES / golden).read_text(encoding="utf-8"))["queries"]
    for path in (FIXTURES / kb).rglob("*.md"):
        note = re.sub(r"\s+", " ", path.read_text(encoding="utf-8")).lower()
        for q in queries:
            assert re.sub(r"\s+", " ", q["query"]).lower() not in note, (path, q["id"])
