"""Walking the knowledge base: which Markdown files groove indexes, and which it skips.

Walk rules (the reference's, stated for users in docs/search.md "Which files are indexed"):

* Start at ``kb_path`` (which may itself be a symlink); below it no symlink is followed. A
  symlinked ``.md`` file or a symlinked directory is skipped with a reason.
* Only ``*.md`` files (extension compared case-insensitively).
* Directories never entered: ``.git``, ``.svn``, ``node_modules`` (ASCII case-insensitive,
  always) and ``exclude_dirs`` (default ``DEFAULT_EXCLUDE_DIRS``; a given list replaces it;
  basenames compared after Unicode case folding). These are silent.
* ``.grooveignore`` at the KB root: gitignore syntax, matched case-insensitively, at most
  64 KiB and 1,000 patterns, BOM stripped. An ignored directory is not entered, so nothing
  under it can be re-included. Ignored paths are silent. A file that cannot be used gives a
  warning and no rules.
* Office lock files (``~$...``, ``.~lock....#``) are silent.
* Hard links, FIFOs, sockets, devices and files over ``MAX_DOCUMENT_BYTES`` are skipped with
  a reason; so are directories that cannot be listed and names that are not valid UTF-8.

Files are listed by their metadata only; ``read_document`` re-checks each one on its handle.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from groove.errors import FileRefusedError, KnowledgeBaseError, literal
from groove.fileguard import hard_link_reason, is_present, read_checked

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

DEFAULT_EXCLUDE_DIRS = (".obsidian", ".git", "node_modules", "target", ".vscode", ".idea")
ALWAYS_EXCLUDED_DIRS = (".git", ".svn", "node_modules")
MAX_DOCUMENT_BYTES = 50 * 1024 * 1024
IGNORE_FILE = ".grooveignore"
MAX_IGNORE_FILE_BYTES = 64 * 1024
MAX_IGNORE_PATTERNS = 1000
DOCUMENT_SUFFIX = ".md"

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


@dataclass(frozen=True)
class KbFile:
    """A Markdown file the walk accepted; ``rel_path`` is '/'-separated."""

    rel_path: str
    path: Path
    size: int


@dataclass(frozen=True)
class SkippedFile:
    """A file or folder the walk left out, with a one-line reason naming it."""

    rel_path: str
    reason: str


@dataclass(frozen=True)
class KbScan:
    """The result of a walk: accepted files sorted by rel_path, skips, warnings."""

    files: tuple[KbFile, ...]
    skipped: tuple[SkippedFile, ...]
    warnings: tuple[str, ...]


@dataclass
class _Walk:
    root: Path
    excluded: frozenset[str]
    ignore: GitIgnoreSpec | None
    files: list[KbFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


# ---- names -------------------------------------------------------------------------------


def _is_always_excluded(name: str) -> bool:
    return name.translate(_ASCII_LOWER) in ALWAYS_EXCLUDED_DIRS


def _is_lock_file(name: str) -> bool:
    return name.startswith("~$") or (name.startswith(".~lock.") and name.endswith("#"))


def _is_document_name(name: str) -> bool:
    return name.lower().endswith(DOCUMENT_SUFFIX) and not _is_lock_file(name)


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes surface as lone surrogates
        return False
    return True


def _ignored(walk: _Walk, rel_path: str, is_dir: bool) -> bool:
    if walk.ignore is None:
        return False
    return walk.ignore.match_file(rel_path.lower() + ("/" if is_dir else ""))


# ---- .grooveignore -----------------------------------------------------------------------


def _ignore_lines(raw: bytes) -> list[str]:
    text = raw.decode("utf-8")  # UnicodeDecodeError is reported by the caller
    text = text.removeprefix("\ufeff")
    return [line.removesuffix("\r") for line in text.split("\n")]


def _is_pattern(line: str) -> bool:
    return bool(line.strip()) and not line.startswith("#")


def _compile_ignore(lines: list[str], warnings: list[str]) -> GitIgnoreSpec | None:
    from pathspec import GitIgnoreSpec  # here: a search only finds the KB's root

    patterns = [line for line in lines if _is_pattern(line)]
    if len(patterns) > MAX_IGNORE_PATTERNS:
        warnings.append(
            f"{IGNORE_FILE} has {len(patterns)} patterns, over the limit of "
            f"{MAX_IGNORE_PATTERNS}; it was ignored"
        )
        return None
    usable = []
    for number, line in enumerate(lines, start=1):
        try:
            GitIgnoreSpec.from_lines([line.lower()])
        except ValueError:
            warnings.append(
                f"{IGNORE_FILE} line {number}: {line!r} is not a valid pattern; skipped"
            )
            continue
        usable.append(line.lower())  # case-insensitive: patterns and paths both lowered
    return GitIgnoreSpec.from_lines(usable)


def load_ignore(kb_root: Path) -> tuple[GitIgnoreSpec | None, list[str]]:
    """The root ``.grooveignore`` as a matcher (None when absent or unusable), plus warnings."""
    path = kb_root / IGNORE_FILE
    warnings: list[str] = []
    if not is_present(path):
        return None, warnings
    try:
        lines = _ignore_lines(read_checked(path, MAX_IGNORE_FILE_BYTES))
    except FileRefusedError as exc:
        return None, [f"{IGNORE_FILE} was not used: {exc.reason}"]
    except UnicodeDecodeError:
        return None, [f"{IGNORE_FILE} was not used: it is not valid UTF-8 text"]
    except OSError as exc:
        return None, [f"{IGNORE_FILE} was not used: it could not be read ({exc.strerror})"]
    return _compile_ignore(lines, warnings), warnings


# ---- the walk ----------------------------------------------------------------------------


def _list_dir(walk: _Walk, directory: Path, rel_dir: str) -> list[os.DirEntry[str]] | None:
    try:
        with os.scandir(directory) as it:
            return list(it)
    except OSError as exc:
        if not rel_dir:
            raise KnowledgeBaseError(
                f"could not list the knowledge base {walk.root} ({exc.strerror})",
                hint="check that groove may read that folder",
            ) from exc
        reason = f"{rel_dir}/ could not be listed ({exc.strerror}) and was skipped"
        walk.skipped.append(SkippedFile(rel_dir, reason))
        return None


def _enters_dir(walk: _Walk, entry: os.DirEntry[str], rel: str) -> bool:
    name = entry.name
    if _is_always_excluded(name) or name.casefold() in walk.excluded or _ignored(walk, rel, True):
        return False
    if entry.is_symlink():
        reason = (
            f"{rel}/ is a symbolic link to a folder and was skipped: groove does not follow links"
        )
        walk.skipped.append(SkippedFile(rel, reason))
        return False
    return True


def _special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _file_skip_reason(rel: str, st: os.stat_result) -> str | None:
    if stat.S_ISLNK(st.st_mode):
        return f"{rel} is a symbolic link and was skipped: groove does not follow links"
    if not stat.S_ISREG(st.st_mode):
        return f"{rel} is {_special_kind(st.st_mode)}, not a regular file, and was skipped"
    if st.st_nlink > 1:
        return hard_link_reason(rel)
    if st.st_size > MAX_DOCUMENT_BYTES:
        cap = MAX_DOCUMENT_BYTES
        return f"{rel} is {st.st_size} bytes, over the {cap} byte limit, and was skipped"
    return None


def _visit_file(walk: _Walk, entry: os.DirEntry[str], rel: str) -> None:
    if not _is_document_name(entry.name) or _ignored(walk, rel, False):
        return
    try:
        st = entry.stat(follow_symlinks=False)
    except FileNotFoundError:  # vanished since the listing
        return
    reason = _file_skip_reason(rel, st)
    if reason is not None:
        walk.skipped.append(SkippedFile(rel, reason))
    else:
        walk.files.append(KbFile(rel, Path(entry.path), st.st_size))


def _is_dir_entry(entry: os.DirEntry[str]) -> bool:
    # A symlink counts as a folder when its target is one; it is then reported, not entered.
    try:
        return entry.is_dir(follow_symlinks=True)
    except OSError:
        return False


def _walk_dir(walk: _Walk, directory: Path, rel_dir: str) -> None:
    entries = _list_dir(walk, directory, rel_dir)
    for entry in entries or ():
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        if not _is_utf8(entry.name):
            shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            reason = f"{shown} has a name that is not valid UTF-8 and was skipped"
            walk.skipped.append(SkippedFile(shown, reason))
        elif _is_dir_entry(entry):
            if _enters_dir(walk, entry, rel):
                _walk_dir(walk, Path(entry.path), rel)
        else:
            _visit_file(walk, entry, rel)


def kb_root(kb_path: Path) -> Path:
    """``kb_path`` made absolute if it names an existing folder, else a KnowledgeBaseError."""
    if not kb_path.exists():
        raise KnowledgeBaseError(
            literal(f"knowledge base not found: {kb_path}"),
            "pass {give} with the folder that holds your Markdown notes",
            setting="kb_path",
        )
    if not kb_path.is_dir():
        raise KnowledgeBaseError(
            literal(f"knowledge base is not a folder: {kb_path}"),
            "{setting} takes the folder that holds your Markdown notes, not a file",
            setting="kb_path",
        )
    return Path(os.path.abspath(kb_path))


def scan_kb(kb_path: Path, exclude_dirs: Sequence[str] | None = None) -> KbScan:
    """List the KB's Markdown files (sorted by rel_path) with what was skipped and why."""
    root = kb_root(kb_path)
    names = DEFAULT_EXCLUDE_DIRS if exclude_dirs is None else tuple(exclude_dirs)
    ignore, warnings = load_ignore(root)
    walk = _Walk(root, frozenset(n.casefold() for n in names), ignore)
    _walk_dir(walk, root, "")
    return KbScan(
        files=tuple(sorted(walk.files, key=lambda f: f.rel_path)),
        skipped=tuple(sorted(walk.skipped, key=lambda s: s.rel_path)),
        warnings=tuple(warnings),
    )


# ---- reading -----------------------------------------------------------------------------


def not_utf8_reason(rel_path: str) -> str:
    """The skip reason for a document whose bytes are not UTF-8."""
    return f"{rel_path} is not valid UTF-8 text and was skipped: groove reads Markdown as UTF-8"


def read_document(f: KbFile) -> tuple[str, bytes]:
    """(text, raw bytes) of a listed file, read through the file guard.

    Raises FileRefusedError when the guard refuses the file or its bytes are not UTF-8; other
    OSErrors (e.g. the file vanished) propagate.
    """
    raw = read_checked(f.path, MAX_DOCUMENT_BYTES)
    try:
        return raw.decode("utf-8"), raw
    except UnicodeDecodeError as exc:
        reason = not_utf8_reason(f.rel_path)
        raise FileRefusedError(reason, reason) from exc


def content_hash(raw: bytes) -> str:
    """Lowercase hex SHA-256 of the raw file bytes."""
    import hashlib  # here: indexing hashes files, a search does not

    return hashlib.sha256(raw).hexdigest()
