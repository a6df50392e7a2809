"""Qrels and query files in the formats IR tools read (TREC, BEIR), and TREC document ids.

A TREC document id is one whitespace-free token, so groove writes a hit as ``path`` or
``path#heading`` with ``%``, ``#`` and whitespace escaped as ``%XX`` (everything else, non-ASCII
included, stays as it is) and reads ids back with the same rule; ids written by other
tools are used verbatim unless they contain ``%XX``. Query ids get the same escaping
(groove's default id is the start of the query text, spaces included).

Qrels (``groove golden import`` / ``export-qrels``): TREC ``qid 0 docid relevance`` or BEIR
``query-id<TAB>corpus-id<TAB>score`` (its header line is skipped). Queries: BEIR JSON lines
``{"_id": ..., "text": ...}`` or ``qid<TAB>text``. Run files, which use the same ids, are
read and written by groove.retrievers.trec.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from groove.errors import GoldenError, GrooveError, literal
from groove.golden.queries import GoldenSet

_ESCAPE = re.compile(r"[%#\s]")
_ESCAPED = re.compile(r"%[0-9A-Fa-f]{2}")


def escape(text: str) -> str:
    """``%``, ``#`` and whitespace as ``%XX`` (UTF-8 bytes); the rest unchanged."""
    return _ESCAPE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), text)


def unescape(text: str) -> str:
    if not _ESCAPED.search(text):
        return text
    from urllib.parse import unquote

    return unquote(text)


def docid(path: str, heading: str | None) -> str:
    return escape(path) if heading is None else f"{escape(path)}#{escape(heading)}"


def split_docid(token: str) -> tuple[str, str | None]:
    """``path`` or ``path#heading`` (the first unescaped ``#`` separates them)."""
    path, sep, heading = token.partition("#")
    return unescape(path), (unescape(heading) if sep else None)


# ------------------------------------------------------------------------- run files


def read_qrels(path: Path) -> dict[str, list[tuple[str, int]]]:
    """{query id: [(doc id, relevance), ...]} from TREC or BEIR qrels, in file order."""
    out: dict[str, list[tuple[str, int]]] = {}
    for n, line in enumerate(_read_text(path, "qrels").splitlines(), start=1):
        cols = line.split("\t") if "\t" in line else line.split()
        if not line.strip():
            continue
        if n == 1 and len(cols) == 3 and not cols[2].strip().lstrip("-").isdigit():
            continue  # BEIR header: query-id corpus-id score
        if len(cols) == 4:
            qid, _, doc, rel = cols
        elif len(cols) == 3:
            qid, doc, rel = cols
        else:
            raise GoldenError(
                f"qrels {path}: line {n}: expected `qid 0 docid relevance` or "
                f"`query-id<TAB>corpus-id<TAB>score`, found {len(cols)} columns",
                "pass TREC or BEIR qrels",
            )
        try:
            relevance = int(float(rel))
        except ValueError:
            raise GoldenError(
                f"qrels {path}: line {n}: relevance {rel!r} is not a number", None
            ) from None
        out.setdefault(unescape(qid.strip()), []).append((doc.strip(), relevance))
    return out


def read_queries(path: Path) -> dict[str, str]:
    """{query id: text} from BEIR JSON lines or ``qid<TAB>text`` lines."""
    out: dict[str, str] = {}
    for n, line in enumerate(_read_text(path, "queries").splitlines(), start=1):
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            try:
                item = json.loads(line)
                qid, text = str(item["_id"]), str(item["text"])
            except (ValueError, KeyError, TypeError):
                raise GoldenError(
                    f'queries {path}: line {n}: expected {{"_id": ..., "text": ...}}', None
                ) from None
        else:
            qid, sep, text = line.partition("\t")
            if not sep:
                raise GoldenError(
                    f"queries {path}: line {n}: expected `qid<TAB>text`",
                    "pass BEIR queries.jsonl or a qid<TAB>text file",
                )
        out[unescape(qid.strip())] = text.strip()
    return out


def golden_from_qrels(
    qrels: Mapping[str, Sequence[tuple[str, int]]],
    queries: Mapping[str, str],
    *,
    path_template: str = "{docid}",
    min_relevance: int = 1,
    source: str = "",
) -> tuple[str, int]:
    """(golden YAML, number of queries) for every judged query with a relevant document.

    ``path_template`` turns a document id into a KB-relative path (``{docid}`` is replaced);
    an id of the form ``doc#heading`` pins the heading."""
    import yaml

    if "{docid}" not in path_template:
        raise GoldenError(  # a template: the option as `groove golden import` names it
            f"{{setting}} {literal(repr(path_template))} does not contain {{{{docid}}}}",
            "write it like {give:'docs/{{docid}}.md'}",
            setting="path",
        )
    entries = []
    for qid, judged in qrels.items():
        expected = []
        for doc, relevance in judged:
            if relevance < min_relevance:
                continue
            doc_id, heading = split_docid(doc)
            item = {"path": path_template.replace("{docid}", doc_id)}
            if heading is not None:
                item["heading"] = heading
            expected.append(item)
        if not expected:
            continue
        if qid not in queries:
            raise GoldenError(
                f"query {qid!r} has judgments but no text in the queries file",
                "pass the queries file that belongs to these qrels",
            )
        entries.append({"id": qid, "query": queries[qid], "expected": expected})
    header = f"# Imported by groove golden import{f' from {source}' if source else ''}.\n"
    body = yaml.safe_dump(
        {"queries": entries}, allow_unicode=True, sort_keys=False, width=100, default_style=None
    )
    return header + body, len(entries)


def qrels_lines(golden: GoldenSet) -> str:
    """TREC qrels of a golden set: ``qid 0 docid 1`` per expected answer."""
    out = []
    for q in golden.queries:
        seen: set[str] = set()
        for e in q.expected:
            token = docid(e.path, e.heading)
            if token not in seen:
                seen.add(token)
                out.append(f"{escape(q.id)} 0 {token} 1\n")
    return "".join(out)


def queries_lines(golden: GoldenSet) -> str:
    """``qid<TAB>text`` per golden query (what pyserini and ir_measures tools read)."""
    return "".join(f"{escape(q.id)}\t{' '.join(q.query.split())}\n" for q in golden.queries)


def _read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GoldenError(f"{what} file not found: {path}", None) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GoldenError(f"cannot read the {what} file {path}: {exc}", None) from None


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` whole or not at all (groove.atomic); an OSError is a one-line error."""
    from groove.atomic import write_file

    try:
        write_file(path, text)
    except OSError as exc:
        raise GrooveError(
            f"cannot write {path}: {exc.strerror or exc}", "check the folder and its permissions"
        ) from None
