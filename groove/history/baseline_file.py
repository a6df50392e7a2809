"""The committed baseline file: the accepted baseline as a file a pull request can review.

The history lives in a CI cache, where nobody reviews it and from which an intended drop
cannot travel with the change that causes it. ``groove baseline accept --file`` writes the
accepted run to ``<golden stem>.baseline.json`` beside the golden file (or the path given,
or ``[eval].baseline_file``); when that file exists, the gate compares every run with it,
with or without a history. The file holds what the gate needs and nothing it does not:
the run's id and time, its fingerprint (the golden hash repeated at the top, for the
reviewer), its corpus snapshot, the aggregate and each scored query's metrics.

The bytes are deterministic (accepting the same run twice writes the same file): keys in a
fixed order, one query per line in golden order, so that a pull request that accepts a
drop shows the metrics that moved in its diff. The history file's rules apply: a file that
is a symlink, a hard link, not a regular file or over the cap is refused, never read; one
that does not parse is an error (it is a reviewed decision, not a cache to start afresh);
it is replaced atomically, and never over a file that is not a baseline file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from groove.atomic import check_folder, write_file
from groove.errors import FileRefusedError, HistoryError, literal
from groove.fileguard import is_present, read_checked
from groove.metrics import Expected, QueryMetrics
from groove.runs.corpus import CorpusSnapshot
from groove.runs.fingerprint import Fingerprint
from groove.runs.record import (
    OUTCOME_PASSED,
    QueryResult,
    RunRecord,
    aggregate_from_dict,
    aggregate_to_dict,
)
from groove.settings.spelling import command_line

BASELINE_SUFFIX = ".baseline.json"
BASELINE_FORMAT = 1
MAX_BASELINE_FILE_BYTES = 16 * 1024 * 1024
_KEYS = ("aggregate", "corpus", "fingerprint", "format", "golden_hash", "per_query", "run")
_RESTORE = "restore it from version control, or write it again with " + command_line(
    "baseline accept", file=True
)


def default_path(golden: Path) -> Path:
    """``<golden stem>.baseline.json`` beside the golden file."""
    return golden.with_name(golden.stem + BASELINE_SUFFIX)


def serialise(run: RunRecord) -> bytes:
    """The file's bytes for ``run``: keys sorted, one scored query per line."""

    def one(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)

    values: dict[str, Any] = {
        "aggregate": aggregate_to_dict(run.aggregate),
        "corpus": run.corpus.to_dict() if run.corpus is not None else None,
        "fingerprint": run.fingerprint.to_dict(),
        "format": BASELINE_FORMAT,
        "golden_hash": run.fingerprint.golden_hash,
        "run": {"id": run.id, "timestamp": run.timestamp},
    }
    lines = ["{"]
    for key in _KEYS:
        if key == "per_query":
            queries = [_query(q) for q in run.per_query if q.expected]
            lines.append('  "per_query": [')
            lines += [f"    {one(q)}," for q in queries[:-1]]
            lines += [f"    {one(q)}" for q in queries[-1:]]
            lines.append("  ],")
        else:
            lines.append(f"  {one(key)}: {one(values[key])}" + ("," if key != _KEYS[-1] else ""))
    lines.append("}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def _query(q: QueryResult) -> dict[str, Any]:
    return {
        "id": q.id,
        "expected": [{"path": e.path, "heading": e.heading} for e in q.expected],
        "metrics": {
            "recall_at_k": {str(k): v for k, v in q.metrics.recall_at_k.items()},
            "reciprocal_rank": q.metrics.reciprocal_rank,
            "ndcg_at_k": {str(k): v for k, v in q.metrics.ndcg_at_k.items()},
        },
    }


def parse(raw: bytes) -> RunRecord:
    """The accepted run a baseline file holds (ValueError, KeyError or TypeError if none)."""
    data = json.loads(raw.decode("utf-8"))
    if not isinstance(data, dict):
        raise TypeError("not a JSON object")
    if data.get("format") != BASELINE_FORMAT:
        raise ValueError(f"format {data.get('format')!r}, expected {BASELINE_FORMAT}")
    fingerprint = Fingerprint.from_dict(data["fingerprint"])
    if data["golden_hash"] != fingerprint.golden_hash:
        raise ValueError("golden_hash differs from the fingerprint's")
    per_query = []
    for q in data["per_query"]:
        m = q["metrics"]
        per_query.append(
            QueryResult(
                id=str(q["id"]),
                query="",
                expected=tuple(Expected(str(e["path"]), e.get("heading")) for e in q["expected"]),
                top_k=(),
                metrics=QueryMetrics(
                    recall_at_k={int(k): float(v) for k, v in m["recall_at_k"].items()},
                    reciprocal_rank=float(m["reciprocal_rank"]),
                    ndcg_at_k={int(k): float(v) for k, v in m["ndcg_at_k"].items()},
                ),
            )
        )
    corpus = data["corpus"]
    run = data["run"]
    return RunRecord(
        timestamp=str(run["timestamp"]),
        fingerprint=fingerprint,
        corpus=CorpusSnapshot.from_dict(corpus) if corpus else None,
        per_query=tuple(per_query),
        aggregate=aggregate_from_dict(data["aggregate"]),
        findings=(),
        run_id=str(run["id"]),
        outcome=OUTCOME_PASSED,
        accepted=True,
    )


def _refuse_folder(path: Path) -> None:
    """A folder given as the file (--file DIR, [eval].baseline_file): said as such, before
    the guarded read words it as something that took a note's place."""
    if path.is_dir() and not path.is_symlink():
        raise HistoryError(
            literal(f"the baseline file {path} is a folder"),
            literal(f"give the path of a file in it, e.g. {path}/<golden stem>.baseline.json"),
        )


def read_baseline_file(path: Path) -> RunRecord | None:
    """The accepted run in the baseline file at ``path``; None when there is no file.

    A file the guards refuse, or one that does not parse, is an error (exit 2)."""
    if not is_present(path):
        return None
    _refuse_folder(path)
    try:
        raw = read_checked(path, MAX_BASELINE_FILE_BYTES)
    except FileRefusedError as exc:
        raise HistoryError(
            literal(f"refusing to read the baseline file: {exc.reason}"),
            "replace it with a regular file (a copy), " + _RESTORE,
        ) from exc
    except OSError as exc:
        raise HistoryError(
            literal(f"failed to read the baseline file: {path} ({exc.strerror})"),
            "check the file's permissions",
        ) from exc
    try:
        return parse(raw)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise HistoryError(
            literal(f"the baseline file {path} is corrupted ({reason})"), _RESTORE
        ) from exc


def write_baseline_file(path: Path, run: RunRecord) -> bool:
    """Write ``run`` as the accepted baseline at ``path``, atomically; False when the file
    already held exactly these bytes. Never over a file that is not a baseline file."""
    check_folder(path, "the baseline file ")  # as eval's outputs: no folder made for a typo
    payload = serialise(run)
    if len(payload) > MAX_BASELINE_FILE_BYTES:
        raise HistoryError(
            f"the run serialises to {len(payload)} bytes, over the "
            f"{MAX_BASELINE_FILE_BYTES} byte cap of a baseline file",
            "this means a very large golden set: split it, or keep the baseline in the history",
        )
    if is_present(path):
        _refuse_folder(path)
        try:
            current = read_checked(path, MAX_BASELINE_FILE_BYTES)
            parse(current)
        except FileRefusedError as exc:
            raise HistoryError(
                literal(f"refusing to replace the baseline file: {exc.reason}"),
                "replace it with a regular file (a copy), or give another path",
            ) from exc
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise HistoryError(
                literal(f"{path} is not a groove baseline file; refusing to overwrite it"),
                "give another path, or remove the file if it is a broken baseline file",
            ) from exc
        except OSError as exc:
            raise HistoryError(
                literal(f"failed to read {path} ({exc.strerror})"), "check its permissions"
            ) from exc
        if current == payload:
            return False
    try:
        write_file(path, payload)
    except OSError as exc:
        raise HistoryError(
            literal(f"could not write the baseline file {path}: {exc.strerror or exc}"),
            "free some space or fix the folder's permissions; the previous file is intact",
        ) from exc
    return True
