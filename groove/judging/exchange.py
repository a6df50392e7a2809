"""A pool to CSV / JSONL for judging elsewhere (a spreadsheet, a labelling tool), and back.

The export has one row per candidate, in priority order, with two empty columns for the
judge: ``relevant`` and ``note``. The import reads the same columns back (only
``query_id``, ``path`` and ``relevant`` are required; ``heading`` and ``note`` are read
when present, the rest is ignored) and turns each row with a verdict into a judgement (an
empty heading is the lead text, as in groove.golden.judgements):

    yes / y / true / 1 / relevant            relevant
    no / n / false / 0 / not relevant        not relevant
    (empty) / skip                           no verdict: the row is left out

The format follows the file name: ``.csv`` or ``.jsonl``. A row that cannot be read stops
the import with its line number, before anything is saved.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groove import fileguard
from groove.errors import FileRefusedError, GoldenError
from groove.golden.judgements import Judgement, now
from groove.golden.lines import json_lines, utf8_text
from groove.golden.qrels import write_atomic
from groove.golden.queries import GoldenSet
from groove.judging.pool import Pool

COLUMNS = ("query_id", "query", "path", "heading", "priority", "sources", "snippet")
VERDICT_COLUMNS = ("relevant", "note")
MAX_IMPORT_BYTES = 64 * 1024 * 1024
_YES = {"yes", "y", "true", "1", "relevant"}
_NO = {"no", "n", "false", "0", "not relevant", "irrelevant"}
_SKIP = {"", "skip"}
_HINT = "relevant must be yes or no (or empty to skip); query_id and path must be filled"


def file_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        raise GoldenError(
            f"cannot tell the format of {path.name}",
            "name the file .csv or .jsonl",
        )
    return suffix[1:]


def export_text(pool: Pool, fmt: str) -> str:
    rows = [c.to_dict() | {"relevant": "", "note": ""} for c in pool.candidates]
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[*COLUMNS, *VERDICT_COLUMNS], lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return out.getvalue()


def export_pool(pool: Pool, path: Path) -> Path:
    write_atomic(path, export_text(pool, file_format(path)))  # an OSError: a one-line error
    return path


@dataclass(frozen=True)
class Imported:
    """What an import read: the judgements, and the rows it left out and why."""

    judgements: tuple[Judgement, ...]
    skipped: int  # rows without a verdict
    unknown: tuple[str, ...]  # query ids that are not in the golden file

    def summary(self) -> str:
        relevant = sum(j.relevant for j in self.judgements)
        line = (
            f"{len(self.judgements)} judgements read ({relevant} relevant, "
            f"{len(self.judgements) - relevant} not relevant), "
            f"{self.skipped} rows without a verdict"
        )
        if self.unknown:
            line += f", {len(self.unknown)} rows for queries not in the golden file (left out)"
        return line


def read_verdicts(path: Path, golden: GoldenSet, by: str) -> Imported:
    """The judgements in an exported-and-filled file, stamped ``by`` and now."""
    fmt = file_format(path)
    try:
        raw = fileguard.read_checked(path, MAX_IMPORT_BYTES)
    except FileRefusedError as exc:
        raise GoldenError(f"refusing to read {path}: {exc.reason}", exc.hint) from exc
    except OSError as exc:
        raise GoldenError(f"failed to read {path}", f"check the file ({exc.strerror})") from exc
    text = utf8_text(raw, lambda line: _error(path, line, "invalid UTF-8"))
    ids = {q.id for q in golden.queries}
    out, skipped, unknown = [], 0, []
    stamp = now()
    for line, row in _rows(path, text, fmt):
        verdict = _verdict(path, line, row.get("relevant"))
        if verdict is None:
            skipped += 1
            continue
        query_id, file = _text(row.get("query_id")), _text(row.get("path"))
        if not query_id or not file:
            raise _error(path, line, "query_id and path are required")
        if query_id not in ids:
            unknown.append(query_id)
            continue
        heading = _text(row.get("heading"))  # empty: the lead text, as the view records it
        note = _text(row.get("note")) or None
        out.append(Judgement(query_id, file, heading, verdict, stamp, by, note))
    return Imported(tuple(out), skipped, tuple(unknown))


def _rows(path: Path, text: str, fmt: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    if fmt == "jsonl":
        for number, data in json_lines(text, lambda n, what: _error(path, n, what)):
            if not isinstance(data, dict):
                raise _error(path, number, "expected a JSON object")
            yield number, data
        return
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in ("query_id", "path", "relevant") if c not in (reader.fieldnames or ())]
    if missing:
        raise _error(path, 1, "missing column(s): " + ", ".join(missing))
    for row in reader:
        yield reader.line_num, row


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _verdict(path: Path, line: int, value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = _text(value).lower()
    if text in _YES:
        return True
    if text in _NO:
        return False
    if text in _SKIP:
        return None
    raise _error(path, line, f"relevant is {json.dumps(value)}, not yes / no / empty")


def _error(path: Path, line: int, what: str) -> GoldenError:
    return GoldenError(f"failed to import judgements: {path}: line {line}: {what}", _HINT)
