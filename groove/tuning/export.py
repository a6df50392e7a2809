"""A saved ``groove tune`` result that can be loaded back: the JSON report plus the table.

``groove tune --format json`` (report/tune_json.py) carries the summary only. The tune
explorer notebook needs every cell of the metric table to redraw any condition, so the
saved form adds, next to the keys of that report:

    queries   the usable golden queries (the table's rows): id, query, expected, tags, line
    table     {k_values, shape, encoding, ndcg: {k: data}, recall: {k: data}, rr: data}: each
              array queries x 384 (condition flat-index order) as little-endian float64,
              zlib-compressed, base64 text (``encoding`` names this); absent when the grid
              did not run. Files written before the encoding existed hold nested lists of
              floats instead (no ``encoding``); both are read.
    notes     the run's notes (groove.notes.Note.to_dict)
    decision  the tune verdict object of ``groove tune --format json`` (adopt with the
              condition and snippet, or keep_default with the reasons); older files
              call it ``verdict``, a name result.json now keeps for the run's outcome

A retriever's tune is saved the same way, with the keys its document adds
(groove.tuning.document); on loading, its grid is rebuilt from ``family`` and ``window``
(and must list the saved conditions), its table is queries x grid width.

The arrays keep every bit, so ``load_tune(save_tune(r))`` gives the same table, and the
analysis (selection, LOO, gates) is recomputed from it: it is a pure function of the table
and the effective rows. A saved refit or decision that the recomputation does not reproduce
is refused rather than shown. Compressed, the table of 225 queries is about 45 KB instead
of 5.8 MB: the grid gives each query only a few distinct values.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from groove.errors import ConfigError
from groove.golden.qrels import write_atomic
from groove.golden.queries import GoldenQuery
from groove.metrics import Expected
from groove.notes import Note
from groove.settings import command_line
from groove.tuning.analysis import analyse
from groove.tuning.document import condition_dict, to_dict
from groove.tuning.families import FamilyGrid, family_grid
from groove.tuning.grid import N_CONDITIONS
from groove.tuning.recommend import retriever_legs
from groove.tuning.result import (
    Analysis,
    EngineLegs,
    LegCounts,
    QueryDiagnostics,
    RetrieverLegs,
    TuneResult,
)
from groove.tuning.seed_grid import SEED_GRID, SeedGrid
from groove.tuning.table import MetricTable

T = TypeVar("T")
_LOAD_HINT = (
    "pass a file written by groove.tuning.export.save_tune or by the tune-explorer notebook "
    f"(its result.json); `{command_line('tune', format='json')}` does not carry the metric table"
)


def to_document(result: TuneResult) -> dict[str, Any]:
    """The JSON report of ``result`` plus ``queries``, ``table`` and ``notes``."""
    document = to_dict(result)
    if "verdict" in document:
        document["decision"] = document.pop("verdict")
    document["queries"] = [query_to_dict(q) for q in result.queries]
    document["notes"] = [note.to_dict() for note in result.notes]
    if result.analysis is not None:
        document["table"] = table_to_dict(result.analysis.table)
    return document


def dumps(document: Mapping[str, Any]) -> str:
    """Pretty JSON with sorted keys, except the table: one compact line."""
    rest = {key: value for key, value in document.items() if key != "table"}
    text = json.dumps(rest, indent=2, sort_keys=True, ensure_ascii=False)
    if "table" not in document:
        return text + "\n"
    compact = json.dumps(document["table"], sort_keys=True, separators=(",", ":"))
    if not rest:
        return f'{{"table": {compact}}}\n'
    # A non-empty object's text ends with "\n}": the table goes in last.
    return f'{text[:-2]},\n  "table": {compact}\n}}\n'


def save_tune(result: TuneResult, path: Path) -> Path:
    """Write ``result`` (with its full metric table) to ``path`` atomically; return the path."""
    write_atomic(path, dumps(to_document(result)))  # an OSError is a one-line error
    return path


def load_tune(path: Path) -> TuneResult:
    """Read a file written by ``save_tune`` or the tune explorer, of either source (extra
    keys, e.g. ``exit_code``, are ignored)."""
    return load_with(path, from_document)


def load_with(path: Path, parse: Callable[[Mapping[str, Any]], T]) -> T:
    """``parse`` of the JSON document at ``path``; an unreadable file, invalid JSON or a
    document ``parse`` cannot read is a ConfigError (exit 2) with the hint to save one."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the tune JSON {path}: {exc.strerror}", _LOAD_HINT) from exc
    except ValueError as exc:
        raise ConfigError(f"the tune JSON {path} is not valid JSON: {exc}", _LOAD_HINT) from exc
    try:
        return parse(document)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(
            f"the tune JSON {path} is not a saved tune result ({_describe(exc)})", _LOAD_HINT
        ) from exc


def from_document(document: Mapping[str, Any]) -> TuneResult:
    """The TuneResult a ``to_document`` dictionary describes (analysis recomputed)."""
    if "retriever" in document and "family" in document:
        return _retriever_from_document(document)
    diagnostics = tuple(_diagnostics_from_dict(d) for d in document["diagnostics"])
    effective = [i for i, d in enumerate(diagnostics) if d.effective]
    analysis = None
    if effective:
        if "table" not in document:
            raise KeyError("table")
        analysis = analyse(table_from_dict(document["table"]), effective)
        check_reproduced(document, condition_dict(analysis.loo.refit), analysis.verdict.adopt)
    source = EngineLegs(
        model=str(document["model"]),
        candidate_pool=int(document["candidate_pool"]),
        chunk_total=int(document["chunk_total"]),
        context_axis_noop=bool(document["context_axis_noop"]),
        diagnostics=diagnostics,
        lexical=str(document.get("lexical", "trigram")),
    )
    return _result(document, source, analysis, SEED_GRID)


def _retriever_from_document(document: Mapping[str, Any]) -> TuneResult:
    """A retriever's saved tune: the grid rebuilt from ``family`` and ``window``."""
    grid = family_grid(document["family"], int(document["window"]))
    if document.get("grid") and document["grid"]["conditions"] != [
        c.to_dict() for c in grid.conditions
    ]:
        raise ValueError("its grid differs from the family's grid of this version")
    counts = tuple(
        LegCounts(str(d["id"]), int(d["fts_candidates"]), int(d["vector_candidates"]),
                  int(d["vec_fts_overlap"]), bool(d["effective"]))
        for d in document["diagnostics"]
    )  # fmt: skip
    effective = tuple(i for i, d in enumerate(counts) if d.effective)
    analysis = None
    if effective:
        table = table_from_dict(document["table"], grid.width)
        analysis = analyse(table, effective, grid)
        check_reproduced(document, condition_dict(analysis.loo.refit), analysis.verdict.adopt)
    source = retriever_legs(str(document["retriever"]), str(document["engine"]), counts, analysis)
    return _result(document, source, analysis, grid)


def _result(
    document: Mapping[str, Any],
    source: EngineLegs | RetrieverLegs,
    analysis: Analysis | None,
    grid: SeedGrid | FamilyGrid,
) -> TuneResult:
    """What every saved tune holds besides its source and analysis."""
    kb = document.get("kb_path")
    return TuneResult(
        golden_path=Path(document["golden_path"]),
        limit=int(document["limit"]),
        k_values=tuple(int(k) for k in document["k_values"]),
        queries=tuple(query_from_dict(q) for q in document["queries"]),
        source=source,
        analysis=analysis,
        grid=grid,
        notes=tuple(Note.from_dict(n) for n in document.get("notes", [])),
        kb_path=Path(kb) if kb else None,
    )


def check_reproduced(document: Mapping[str, Any], refit: Mapping[str, Any], adopt: bool) -> None:
    saved_refit = document["loo"]["refit"]
    saved_adopt = saved_decision(document)["decision"] == "adopt"
    if saved_refit != refit or saved_adopt != adopt:
        raise ValueError(
            "the saved refit or verdict differs from the one its table gives: the file was "
            "edited, or written by a different version of the selection rule"
        )


def saved_decision(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """The tune decision object: ``decision``, or ``verdict`` in files written before
    result.json gave ``verdict`` the same meaning (and type) in both notebooks."""
    if isinstance(document.get("decision"), Mapping):
        return document["decision"]
    verdict = document["verdict"]
    if not isinstance(verdict, Mapping):
        raise KeyError("decision")
    return verdict


def _describe(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing key {exc.args[0]!r}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def query_to_dict(q: GoldenQuery) -> dict[str, Any]:
    return {
        "id": q.id,
        "query": q.query,
        "expected": [{"path": e.path, "heading": e.heading} for e in q.expected],
        "tags": list(q.tags),
        "line": q.line,
    }


def query_from_dict(data: Mapping[str, Any]) -> GoldenQuery:
    line = data.get("line")
    return GoldenQuery(
        id=str(data["id"]),
        query=str(data["query"]),
        expected=tuple(Expected(str(e["path"]), e.get("heading")) for e in data["expected"]),
        tags=tuple(str(t) for t in data.get("tags", [])),
        line=int(line) if line is not None else None,
    )


def _diagnostics_from_dict(data: Mapping[str, Any]) -> QueryDiagnostics:
    return QueryDiagnostics(
        id=str(data["id"]),
        fts_candidates=int(data["fts_candidates"]),
        fts_total_matches=int(data["fts_total_matches"]),
        vec_fts_overlap=int(data["vec_fts_overlap"]),
        idf_clamped=bool(data["idf_clamped"]),
        bm25_sensitive=bool(data["bm25_sensitive"]),
        rrf_ties=int(data["rrf_ties"]),
        lexical_leg=str(data.get("lexical_leg", "trigram")),
    )


TABLE_ENCODING = "float64-le-zlib-base64"


def _pack(array: np.ndarray) -> str:
    raw = np.ascontiguousarray(array, dtype="<f8").tobytes()
    return base64.b64encode(zlib.compress(raw, 6)).decode("ascii")


def _unpack(data: Any, shape: tuple[int, int]) -> np.ndarray:
    if not isinstance(data, str):
        raise TypeError("a table array must be encoded text")
    raw = zlib.decompress(base64.b64decode(data.encode("ascii"), validate=True))
    return np.frombuffer(raw, dtype="<f8").reshape(shape).astype(np.float64)


def table_to_dict(table: MetricTable) -> dict[str, Any]:
    return {
        "k_values": list(table.k_values),
        "shape": list(table.rr.shape),
        "encoding": TABLE_ENCODING,
        "ndcg": {str(k): _pack(table.ndcg[k]) for k in table.k_values},
        "recall": {str(k): _pack(table.recall[k]) for k in table.k_values},
        "rr": _pack(table.rr),
    }


def table_from_dict(data: Mapping[str, Any], width: int = N_CONDITIONS) -> MetricTable:
    k_values = tuple(int(k) for k in data["k_values"])
    if "encoding" not in data:  # written before the encoding: nested lists of floats

        def read(value: Any) -> np.ndarray:
            return np.asarray(value, dtype=np.float64)
    elif data["encoding"] == TABLE_ENCODING:
        rows, columns = (int(n) for n in data["shape"])

        def read(value: Any) -> np.ndarray:
            return _unpack(value, (rows, columns))
    else:
        raise ValueError(f"unknown table encoding {data['encoding']!r}")
    return MetricTable(
        k_values=k_values,
        ndcg={k: read(data["ndcg"][str(k)]) for k in k_values},
        recall={k: read(data["recall"][str(k)]) for k in k_values},
        rr=read(data["rr"]),
        width=width,
    )
