"""The history file's stored form: each fact once, big arrays one compact line per item.

A Cranfield run (225 queries, limit 10) written as ``RunRecord.to_dict``, with the
sketches, takes about 390 KB compact and 820 KB pretty-printed, most of it repeated from
run to run: every run repeats the golden's queries and expected lists, and every hit spells
out its path and heading. The stored form keeps the same facts, written once (95 KB per
run over three runs: bench/history_size.py):

* ``queries``: the golden's query lists (id, text, expected entries, tags), keyed by a
  digest of their content; a run names its list (``"queries": key``);
* ``chunks``: each ``[path, heading]`` that an expected entry, a hit or a sketch names, once
  for the file; everything else refers to it by position;
* per run, ``results``: one row per query, in its query list's order:
  ``[chunk refs, scores, reciprocal rank, recall@k values, nDCG@k values]`` (+ the
  lexical leg when there was one), the k values those of the fingerprint, ranks 1..n.
  A run whose scores are all float32 (groove's engine) says ``"scores": "f32"`` and writes
  each in the fewest digits float32 reads back the same (any other format name is one a
  newer groove wrote: ``NewerFormatError``, never read as plain numbers). A query that
  does not fit that shape is stored as the full ``QueryResult`` dictionary in its row's
  place;
* ``sketches``: the golden doctor's sketches, grouped by the timestamp that saw them.

Every other field of a run is stored as ``RunRecord.to_dict`` writes it, so a run reads back
equal to the one written. The tables are built afresh at every save from the runs kept, so
a trimmed run leaves nothing behind. Files written before (``per_query`` in every run, the
sketches as ``answers``) read as they always did; the next save writes the stored form.

``dumps`` lays the document out with two-space indentation for the objects and one line
per item of a list of lists or objects: the file stays JSON with the ``{"runs": [...]}``
shape and stays readable line by line.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from groove.golden.answers import AnswerSketch, SketchedChunk, sketches_from_list
from groove.metrics import Expected, QueryMetrics, RankedHit
from groove.runs.record import QueryResult, RunRecord

QUERY_LIST_KEY_CHARS = 12
F32 = "f32"

Chunk = tuple[str, str | None]


class NewerFormatError(Exception):
    """A stored run in a form this groove does not know: a newer groove wrote it, so the file
    holds runs this one cannot read. Not damage: the history must not start fresh over it."""

    def __init__(self, what: str, found: object, known: str) -> None:
        super().__init__(f"{what} {found!r}, this one reads {known}")
        self.what, self.found, self.known = what, found, known


class ChunkTable:
    """The file's ``[path, heading]`` pairs, each once, in the order first named."""

    def __init__(self) -> None:
        self.positions: dict[Chunk, int] = {}

    def ref(self, path: str, heading: str | None) -> int:
        return self.positions.setdefault((path, heading), len(self.positions))

    def to_list(self) -> list[list[str | None]]:
        return [[path, heading] for path, heading in self.positions]


# ---------------------------------------------------------------- writing


def encode(
    runs: Sequence[RunRecord],
    pins: Mapping[str, str] | None,
    answers: Mapping[str, AnswerSketch] | None,
) -> dict[str, Any]:
    """The stored document of ``runs`` (newest first), the named baselines and sketches."""
    chunks = ChunkTable()
    query_lists: dict[str, list[Any]] = {}
    stored = [_encode_run(run, chunks, query_lists) for run in runs]
    data: dict[str, Any] = {"runs": stored}
    if pins:
        data["baselines"] = dict(sorted(pins.items()))
    if query_lists:
        data["queries"] = query_lists
    sketches = _encode_sketches(answers or {}, chunks)
    if chunks.positions:
        data["chunks"] = chunks.to_list()
    if sketches:
        data["sketches"] = sketches
    return data


def _encode_run(
    run: RunRecord, chunks: ChunkTable, query_lists: dict[str, list[Any]]
) -> dict[str, Any]:
    full = replace(run, per_query=()).to_dict(keep_empty_findings=False)
    f32, scores = _spelled_scores(run.per_query)
    ks = run.fingerprint.k_values
    out: dict[str, Any] = {}
    for key, value in full.items():
        if key != "per_query":
            out[key] = value
            continue
        key_of_list = _query_list_key(run.per_query)
        if key_of_list not in query_lists:
            query_lists[key_of_list] = [_query_entry(q, chunks) for q in run.per_query]
        out["queries"] = key_of_list
        if f32:
            out["scores"] = F32
        out["results"] = [
            _result_row(q, ks, spelled, chunks)
            for q, spelled in zip(run.per_query, scores, strict=True)
        ]
    return out


def _query_list_key(per_query: Sequence[QueryResult]) -> str:
    """A digest of what the query list holds, so that equal lists share one entry."""
    content = [
        [q.id, q.query, [[e.path, e.heading] for e in q.expected], list(q.tags)] for q in per_query
    ]
    text = json.dumps(content, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:QUERY_LIST_KEY_CHARS]


def _query_entry(q: QueryResult, chunks: ChunkTable) -> list[Any]:
    entry: list[Any] = [q.id, q.query, [chunks.ref(e.path, e.heading) for e in q.expected]]
    if q.tags:
        entry.append(list(q.tags))
    return entry


def _result_row(
    q: QueryResult, ks: Sequence[int], scores: list[Any], chunks: ChunkTable
) -> list[Any] | dict[str, Any]:
    m = q.metrics
    fits = (
        [h.rank for h in q.top_k] == list(range(1, len(q.top_k) + 1))
        and list(m.recall_at_k) == list(ks)
        and list(m.ndcg_at_k) == list(ks)
    )
    if not fits:
        return q.to_dict()
    row: list[Any] = [
        [chunks.ref(h.path, h.heading) for h in q.top_k],
        scores,
        _number(m.reciprocal_rank),
        [_number(m.recall_at_k[k]) for k in ks],
        [_number(m.ndcg_at_k[k]) for k in ks],
    ]
    if q.lexical_leg is not None:
        row.append(q.lexical_leg)
    return row


def _number(value: float) -> float | int:
    """``value`` as JSON writes it shortest: a whole number without its ``.0``."""
    whole = math.isfinite(value) and value.is_integer() and abs(value) < 2**53
    return int(value) if whole and math.copysign(1.0, value) > 0 else value


def _spelled_scores(per_query: Sequence[QueryResult]) -> tuple[bool, list[list[Any]]]:
    """Every query's hit scores as the row writes them, and whether they are float32: then
    each in the fewest digits that read back, through float32, as the same value (checked
    here, so the short spelling is used only where it is exact)."""
    import numpy as np

    wide = np.fromiter((h.score for q in per_query for h in q.top_k), dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        narrow = wide.astype(np.float32)
        spelled = [float(str(x)) for x in narrow]
        back = np.asarray(spelled, dtype=np.float64).astype(np.float32).astype(np.float64)
    f32 = len(wide) > 0 and bool(np.isfinite(wide).all() and np.array_equal(back, wide))
    flat = [_number(x) for x in (spelled if f32 else wide.tolist())]
    out, start = [], 0
    for q in per_query:
        out.append(flat[start : start + len(q.top_k)])
        start += len(q.top_k)
    return f32, out


def _encode_sketches(
    answers: Mapping[str, AnswerSketch], chunks: ChunkTable
) -> dict[str, list[Any]]:
    grouped: dict[str, list[Any]] = {}
    for path in sorted(answers):
        sketch = answers[path]
        cells = [[chunks.ref(path, c.heading), c.digest] for c in sketch.chunks]
        grouped.setdefault(sketch.seen, []).append([path, cells])
    return dict(sorted(grouped.items()))


# ---------------------------------------------------------------- reading


def decode(
    data: Mapping[str, Any],
) -> tuple[tuple[RunRecord, ...], dict[str, str], dict[str, AnswerSketch]]:
    """Runs, named baselines and sketches of a history document, stored form or older.
    Raises ValueError, KeyError, TypeError, IndexError or AttributeError when malformed,
    NewerFormatError when a newer groove wrote it."""
    runs = data["runs"]
    if not isinstance(runs, list):
        raise TypeError("`runs` is not a list")
    pins = data.get("baselines") or {}
    if not isinstance(pins, dict):
        raise TypeError("`baselines` is not a mapping")
    chunks = [_chunk(item) for item in data.get("chunks") or []]
    query_lists = {
        str(key): [_query(entry, chunks) for entry in entries]
        for key, entries in (data.get("queries") or {}).items()
    }
    records = tuple(_decode_run(run, chunks, query_lists) for run in runs)
    if "sketches" in data:
        sketches = _decode_sketches(data["sketches"], chunks)
    else:
        sketches = sketches_from_list(data.get("answers"))
    return records, {str(k): str(v) for k, v in pins.items()}, sketches


def _chunk(item: Any) -> Chunk:
    path, heading = item
    return str(path), None if heading is None else str(heading)


def _at(chunks: Sequence[Chunk], ref: Any) -> Chunk:
    """The chunk at position ``ref``; anything but a position in the table is damage."""
    if type(ref) is not int or not 0 <= ref < len(chunks):
        raise IndexError(f"no chunk at position {ref!r}")
    return chunks[ref]


#: One golden query as a query list holds it: id, text, expected entries, tags.
QueryEntry = tuple[str, str, tuple[Expected, ...], tuple[str, ...]]


def _query(entry: Sequence[Any], chunks: Sequence[Chunk]) -> QueryEntry:
    expected = tuple(Expected(*_at(chunks, ref)) for ref in entry[2])
    tags = tuple(str(t) for t in entry[3]) if len(entry) > 3 else ()
    return str(entry[0]), str(entry[1]), expected, tags


def _decode_run(
    data: Mapping[str, Any], chunks: Sequence[Chunk], query_lists: Mapping[str, list[QueryEntry]]
) -> RunRecord:
    record = RunRecord.from_dict(data)
    if "results" not in data:  # written before the stored form: per_query read above
        return record
    key = data.get("queries")
    if not isinstance(key, str):
        raise ValueError(f"run {record.id} has results but names no query list")
    if key not in query_lists:
        raise ValueError(f"run {record.id} names the query list {key!r}, which the file lacks")
    entries = query_lists[key]
    rows = data["results"]
    if len(rows) != len(entries):
        raise ValueError("a run's results do not match its query list")
    f32 = _scores_format(data) == F32
    ks = record.fingerprint.k_values
    per_query = tuple(
        _decode_query(entry, row, ks, f32, chunks) for entry, row in zip(entries, rows, strict=True)
    )
    return replace(record, per_query=per_query)


def _scores_format(data: Mapping[str, Any]) -> str | None:
    """How the run's scores are spelled: ``"f32"``, or None (as JSON reads them)."""
    spelled = data.get("scores")
    if spelled is None or spelled == F32:
        return spelled
    if isinstance(spelled, str):
        raise NewerFormatError("scores format", spelled, f"only {F32!r}")
    raise TypeError(f"a run's `scores` is {spelled!r}, not a format name")


def _decode_query(
    entry: QueryEntry,
    row: Any,
    ks: Sequence[int],
    f32: bool,
    chunks: Sequence[Chunk],
) -> QueryResult:
    if isinstance(row, Mapping):  # a query the compact row could not hold
        return QueryResult.from_dict(row)
    refs, scores, rr, recall, ndcg = row[:5]
    if len(refs) != len(scores) or len(recall) != len(ks) or len(ndcg) != len(ks):
        raise ValueError("a compact result row is malformed")
    hits = [
        (_at(chunks, ref), score) for ref, score in zip(refs, _scores(scores, f32), strict=True)
    ]
    top_k = tuple(
        RankedHit(rank, path, heading, score)
        for rank, ((path, heading), score) in enumerate(hits, start=1)
    )
    metrics = QueryMetrics(
        recall_at_k={k: float(v) for k, v in zip(ks, recall, strict=True)},
        reciprocal_rank=float(rr),
        ndcg_at_k={k: float(v) for k, v in zip(ks, ndcg, strict=True)},
    )
    leg = row[5] if len(row) > 5 and row[5] in ("trigram", "porter") else None
    query_id, text, expected, tags = entry
    return QueryResult(query_id, text, expected, top_k, metrics, leg, tags)


def _scores(values: Sequence[Any], f32: bool) -> list[float]:
    if not f32:
        return [float(v) for v in values]
    import numpy as np

    return list(np.asarray(values, dtype=np.float64).astype(np.float32).astype(np.float64).tolist())


def _decode_sketches(data: Any, chunks: Sequence[Chunk]) -> dict[str, AnswerSketch]:
    """The sketches read back; malformed ones read as no memory, as older files' do."""
    if not isinstance(data, Mapping):
        return {}
    out: dict[str, AnswerSketch] = {}
    try:
        for seen, items in data.items():
            for path, cells in items:
                parts = tuple(
                    SketchedChunk(_at(chunks, ref)[1], str(digest)) for ref, digest in cells
                )
                out[str(path)] = AnswerSketch(str(path), str(seen), parts)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return {}
    return dict(sorted(out.items()))


# ---------------------------------------------------------------- layout


def dumps(document: Mapping[str, Any]) -> bytes:
    """The document as the history file holds it (see the module's docstring)."""
    return (_layout(document, "") + "\n").encode("utf-8")


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _compact(value: Any) -> str:
    return _COMPACT.encode(value)


def _layout(value: Any, indent: str) -> str:
    inner = indent + "  "
    if isinstance(value, Mapping) and value:
        items = [f"{inner}{_compact(str(k))}: {_layout(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list) and any(isinstance(v, list | Mapping) for v in value):
        lines = [inner + (_compact(v) if _is_row(v) else _layout(v, inner)) for v in value]
        return "[\n" + ",\n".join(lines) + f"\n{indent}]"
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _is_row(value: Any) -> bool:
    """An item written on one line: a list, or an object holding no object (a run, the
    query lists and the sketches are laid out further)."""
    if isinstance(value, list):
        return True
    return isinstance(value, Mapping) and not any(isinstance(v, Mapping) for v in value.values())
