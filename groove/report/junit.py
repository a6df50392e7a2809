"""An eval run as a JUnit XML report, the test-report format every CI system reads.

One ``<testcase>`` per golden query, in golden order: ``name`` is the query's id,
``classname`` its first tag (a CI page groups cases by it), else the golden file's stem.
A query that missed (no expected answer within the largest k) or regressed (its recall at
the largest k fell by more than the threshold since the compared run) gets a
``<failure>`` of type ``miss`` or ``regression``: its ``message`` is the line the text
report's per-query section prints for it, its text that line and, with ``--explain``, the
cause of each expected answer it missed. A query with no
expected answer is not scored and is ``<skipped>``. The suite's ``<properties>`` carry
the verdict, the exit code, the gate (mode, applied, reason) and every aggregate metric
with its change since the compared run.

Deterministic: the same run gives the same bytes (no clock, no host name; attributes in
a fixed order). The file contains text from the golden file and the knowledge base, so
every value goes through the XML escaper, and characters XML 1.0 cannot hold are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from groove.errors import GrooveError
from groove.evaluation.result import EvalRun
from groove.explain.attribution import Attribution
from groove.report.eval_text import per_query_line
from groove.runs.record import metric_pairs
from groove.settings import DEFAULT_LIMIT

SUITE_NAME = "groove eval"
XML_HEADER = '<?xml version="1.0" encoding="UTF-8"?>'
# how a report groove wrote starts (``forget`` removes only such a file)
OWN_START = f'{XML_HEADER}\n<testsuites name="{SUITE_NAME}" '.encode()
FAILURE_MISS = "miss"
FAILURE_REGRESSION = "regression"
# XML 1.0 has no way to write these, even escaped (a control character in a query or a
# note's heading would make the file unreadable).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("", text)


def _attr(text: str) -> str:
    return quoteattr(_clean(text))


def _text(text: str) -> str:
    return escape(_clean(text))


def cause_lines(answers: Sequence[Attribution]) -> list[str]:
    """What ``--explain`` found for each expected answer the query missed."""
    lines = []
    for a in answers:
        if not a.missed:
            continue
        lines.append(f"{a.label} [{a.cause}]: {a.explanation()}")
    return lines


def properties(run: EvalRun) -> list[tuple[str, str]]:
    """(name, value) of the suite: the verdict, the gate and the aggregate metrics."""
    out = [
        ("groove.verdict", run.verdict),
        ("groove.exit_code", str(run.exit_code)),
        ("groove.run_id", run.record.id),
        ("groove.timestamp", run.record.timestamp),
        ("groove.golden", str(run.golden_path)),
        ("groove.queries", str(run.record.aggregate.query_count)),
        ("groove.baseline_id", run.previous.id if run.diff_enabled and run.previous else ""),
    ]
    status = run.gate_status
    if status is not None:
        out += [
            ("groove.gate.mode", status.mode),
            ("groove.gate.threshold", f"{status.threshold:g}"),
            ("groove.gate.applied", "true" if status.applied else "false"),
            ("groove.gate.reason", status.reason or ""),
        ]
    aggregate = run.record.aggregate
    deltas = {d.label: d.delta for d in run.deltas()}
    for label, value, _ in metric_pairs(aggregate, aggregate):
        out.append((f"metric.{label}", repr(value)))
        if label in deltas:
            out.append((f"delta.{label}", repr(deltas[label])))
    return out


def render(run: EvalRun) -> str:
    """The JUnit XML document of ``run`` (UTF-8 text, one element a line)."""
    k_max = max(run.fingerprint.k_values, default=DEFAULT_LIMIT)
    # by identity: two golden queries may share an id (duplicate-query-id), each is a case
    flagged = {id(q): previous for q, previous in run.flagged_queries()}
    attribution = run.attribution or {}
    classname = run.golden_path.stem or "golden"
    cases = []
    failures = skipped = 0
    for q in run.per_query:
        group = q.tags[0] if q.tags else classname
        head = f"    <testcase name={_attr(q.id)} classname={_attr(group)}"
        if not q.expected:
            skipped += 1
            cases.append(f'{head}>\n      <skipped message="no expected answer: not scored"/>')
            cases.append("    </testcase>")
        elif id(q) in flagged:
            failures += 1
            line = per_query_line(q, flagged[id(q)], k_max, width=0)
            body = "\n".join([line, *cause_lines(attribution.get(q.id, ()))])
            kind = FAILURE_MISS if q.is_miss else FAILURE_REGRESSION
            cases.append(f"{head}>")
            cases.append(
                f"      <failure message={_attr(line)} type={_attr(kind)}>{_text(body)}</failure>"
            )
            cases.append("    </testcase>")
        else:
            cases.append(f"{head}/>")
    counts = f'tests="{len(run.per_query)}" failures="{failures}" errors="0" skipped="{skipped}"'
    name = _attr(f"{SUITE_NAME}: {run.golden_path.name}")
    lines = [
        XML_HEADER,
        f"<testsuites name={_attr(SUITE_NAME)} {counts}>",
        f"  <testsuite name={name} {counts} timestamp={_attr(run.record.timestamp[:19])}>",
        "    <properties>",
        *(f"      <property name={_attr(k)} value={_attr(v)}/>" for k, v in properties(run)),
        "    </properties>",
        *cases,
        "  </testsuite>",
        "</testsuites>",
    ]
    return "\n".join(lines) + "\n"


def write(path: Path, run: EvalRun) -> None:
    """Write the report of ``run`` to ``path`` whole or not at all (groove.atomic); an
    OSError is a one-line error (exit 2), before the run enters the history."""
    from groove.atomic import write_file

    try:
        write_file(path, render(run))
    except OSError as exc:
        raise GrooveError(
            f"cannot write the JUnit report {path}: {exc.strerror or exc}",
            "check the folder and its permissions",
        ) from None


def forget(path: Path) -> None:
    """Remove the report an earlier run left at ``path`` before this run starts: a run that
    fails must not leave the last run's passing cases for CI to read. A file groove did
    not write is left alone (``write`` replaces it only when this run succeeds)."""
    try:
        with path.open("rb") as handle:
            start = handle.read(len(OWN_START))
        if start == OWN_START:
            path.unlink()
    except OSError:
        return  # absent or unreadable: nothing of ours to remove
