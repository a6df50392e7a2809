"""The name an external retriever's runs are recorded under, when ``--retriever-name`` is not given.

Two different systems must never share a name (they would be diffed and gated against each
other), so the default name says everything that picks the system:

* ``command:`` the whole command line, and when an argument is an existing file (or the
  program is a ``#!`` script), ``#`` and a short hash of the content of those files:
  ``python3 a.py #3f2a1c9d0b1e``. Editing the script makes another configuration.
* ``http(s)://`` the URL without user, password, query string or fragment, and with
  ``--retriever-body`` ``#`` and the hash of that request template (another query body is
  another system on the same endpoint).
* ``run:`` the file's path as given and ``#`` the hash of its content.

Runs recorded before this rule carry the short name (the program, or the run file's base
name); ``legacy_rename`` recognises that case so the diff note can say why the diff is off.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePath

HASH_CHARS = 12  # 48 bits: a name, not a security boundary
_CHUNK = 1 << 20


def content_hash(paths: Iterable[Path]) -> str | None:
    """The short sha256 of the files' contents in order (None when there is none)."""
    digest = hashlib.sha256()
    seen = False
    for path in paths:
        seen = True
        digest.update(str(path.stat().st_size).encode() + b"\0")
        with path.open("rb") as f:
            while chunk := f.read(_CHUNK):
                digest.update(chunk)
    return digest.hexdigest()[:HASH_CHARS] if seen else None


def _with_hash(text: str, digest: str | None) -> str:
    return f"{text} #{digest}" if digest else text


def command_name(argv: list[str]) -> str:
    """``python3 a.py #3f2a1c9d0b1e``: the command line, and the hash of its file arguments
    (and of the program when it is a script: an interpreter is not the system measured)."""
    files = [Path(arg) for arg in argv[1:] if arg and _is_file(Path(arg))]
    program = Path(argv[0])
    if _is_file(program) and _is_script(program):
        files.insert(0, program)
    return _with_hash(shlex.join(argv), content_hash(files))


def http_name(public_url: str, body: str | None) -> str:
    """``https://host/idx/_search #3f2a1c9d0b1e``: the URL, and the hash of the body template."""
    if body is None:
        return public_url
    return _with_hash(public_url, hashlib.sha256(body.encode("utf-8")).hexdigest()[:HASH_CHARS])


def run_file_name(path: str) -> str:
    """``out/bm25.trec #3f2a1c9d0b1e``; a missing file fails later, when the run opens."""
    file = Path(path).expanduser()
    return _with_hash(PurePath(path).as_posix(), content_hash([file]) if _is_file(file) else None)


def _is_script(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name too long for the file system is not a file
        return False


def legacy_rename(before: Mapping[str, str] | None, now: Mapping[str, str] | None) -> bool:
    """Whether ``before`` is the short name older groove recorded for the retriever ``now``."""
    if not before or not now or before.get("kind") != now.get("kind"):
        return False
    old, new = before.get("name", ""), now.get("name", "")
    if old == new or "#" in old:
        return False
    text = new.rsplit(" #", 1)[0]
    if now["kind"] == "command":
        try:
            argv = shlex.split(text)
        except ValueError:
            return False
        return bool(argv) and argv[0] == old
    if now["kind"] == "run":
        return PurePath(text).name == old
    return False


def retriever_change_note(before: Mapping[str, str] | None, now: Mapping[str, str] | None) -> str:
    """Why a run of another retriever is not diffed (an old short name says so)."""
    if before is not None and now is not None and legacy_rename(before, now):
        return (
            f"retriever changed since last run (recorded as {before['name']!r} before groove "
            f"named a {now['kind']} retriever in full: a new configuration), diff disabled"
        )
    return "retriever changed since last run, diff disabled"
