"""Run files in the formats IR tools read: TREC and JSON lines.

Run file (``--retriever run:FILE``, ``--export-run``)::

    qid Q0 docid rank score tag          TREC: hits ordered by the rank column
    {"id": "q1", "hits": [{"path": ..., "heading": ..., "score": ...}, ...]}   JSON lines

Document and query ids follow groove.golden.qrels (``path`` or ``path#heading``, ``%XX``
escapes).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from groove.errors import GrooveError, RetrieverError
from groove.golden.qrels import docid, escape, split_docid, unescape
from groove.metrics import RankedHit
from groove.retrievers.base import hits_from_items
from groove.retrievers.legs import QueryLegs, parse_legs
from groove.runs.record import QueryResult

RUN_TAG = "groove"


@dataclass(frozen=True)
class RunFile:
    path: Path
    hits: Mapping[str, tuple[RankedHit, ...]]
    legs: Mapping[str, QueryLegs] = field(default_factory=dict)  # JSON lines with `legs`


def read_run(path: Path) -> RunFile:
    """A TREC or JSON-lines run; RetrieverError naming the line for anything malformed."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RetrieverError(f"run file not found: {path}", "check the path after run:") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RetrieverError(f"cannot read the run file {path}: {exc}", None) from None
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if lines and lines[0][1].lstrip().startswith("{"):
        legs: dict[str, QueryLegs] = {}
        return RunFile(path, _json_lines(path, lines, legs), legs)
    return RunFile(path, _trec_lines(path, lines))


def _run_error(path: Path, n: int, what: str) -> RetrieverError:
    return RetrieverError(
        f"run file {path}: line {n}: {what}",
        "TREC lines are `qid Q0 docid rank score tag`; JSON lines are "
        '{"id": ..., "hits": [{"path": ...}, ...]}',
    )


def _trec_lines(path: Path, lines: Sequence[tuple[int, str]]) -> dict[str, tuple[RankedHit, ...]]:
    rows: dict[str, list[tuple[int, int, str, str | None, float]]] = {}
    for n, line in lines:
        cols = line.split()
        if len(cols) != 6:
            raise _run_error(path, n, f"expected 6 columns, found {len(cols)}")
        qid, _, token, rank_text, score_text, _ = cols
        try:
            rank, score = int(rank_text), float(score_text)
        except ValueError:
            raise _run_error(
                path, n, f"query {unescape(qid)!r}: rank or score is not a number"
            ) from None
        doc_path, heading = split_docid(token)
        rows.setdefault(unescape(qid), []).append((rank, n, doc_path, heading, score))
    out = {}
    for qid, found in rows.items():
        found.sort(key=lambda r: (r[0], r[1]))  # the rank column, then file order
        out[qid] = tuple(RankedHit(i, p, h, s) for i, (_, _, p, h, s) in enumerate(found, start=1))
    return out


def _json_lines(
    path: Path, lines: Sequence[tuple[int, str]], legs: dict[str, QueryLegs]
) -> dict[str, tuple[RankedHit, ...]]:
    out: dict[str, tuple[RankedHit, ...]] = {}
    for n, line in lines:
        try:
            answer = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _run_error(path, n, f"not JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(answer, dict) or answer.get("id") is None:
            raise _run_error(path, n, "expected an object with `id` and `hits`")
        qid = str(answer["id"])
        if qid in out:
            raise _run_error(path, n, f"query {qid!r} appears twice")
        items = answer.get("hits")
        if not isinstance(items, list):
            raise _run_error(path, n, f"query {qid!r}: `hits` is missing or not a list")
        try:
            out[qid] = hits_from_items(items, qid)
            found = parse_legs(answer, qid)
            if found is not None:
                legs[qid] = found
        except GrooveError as exc:
            raise _run_error(path, n, exc.message.removeprefix("retriever answer for ")) from None
    return out


def run_lines(per_query: Iterable[QueryResult], *, by: str = "path", tag: str = RUN_TAG) -> str:
    """The TREC run of an eval: one line per hit (``by="heading"``: ``path#heading`` ids) or
    per document (``by="path"``: its first hit, ranks renumbered), which is what qrels that
    judge whole documents are scored against."""
    out = []
    for q in per_query:
        seen: set[str] = set()
        rank = 0
        for hit in q.top_k:
            token = docid(hit.path, hit.heading if by == "heading" else None)
            if token in seen:
                continue
            seen.add(token)
            rank += 1
            out.append(f"{escape(q.id)} Q0 {token} {rank} {hit.score!r} {tag}\n")
    return "".join(out)


# ----------------------------------------------------------------------------- qrels
