"""Findings on stderr stay readable: at most 10 entries of each list, the rest counted,
``--full`` for everything, the JSON report complete (issue 27, item 6).

After a reorganisation that removed 150 expected documents, ``golden-path-not-indexed``
wrote 202 lines to stderr and nothing else there could be read.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from groove.cli import cli
from groove.golden.findings import (
    CHECK_DUPLICATE_ID,
    CHECK_NOT_INDEXED,
    CHECK_QUOTED,
    DuplicateIdFinding,
    Finding,
    PathFinding,
    QuotedQuery,
)
from groove.report.findings_text import (
    ALL_ENTRIES,
    duplicate_id_text,
    path_text,
    quoted_text,
    warning_texts,
)

WHERE = ALL_ENTRIES  # the library names no CLI flag; the CLI passes its own (cli/words.py)


def test_each_list_shows_ten_and_counts_the_rest() -> None:
    quoted = [
        Finding(CHECK_QUOTED, f"leak/{i:02}.md", tuple(QuotedQuery(f"q{j}", j) for j in range(14)))
        for i in range(12)
    ]
    text = quoted_text(quoted).splitlines()
    assert sum(line.startswith("  leak/") for line in text) == 10
    assert text.count("    q9 (rank 9)") == 10 and "    q10 (rank 10)" not in text
    assert text.count(f"    ... and 4 more queries ({WHERE})") == 10
    assert f"  ... and 2 more documents ({WHERE})" in text
    full = quoted_text(quoted, full=True).splitlines()
    assert sum(line.startswith("  leak/") for line in full) == 12 and "... and" not in "\n".join(
        full
    )

    paths = [
        PathFinding(CHECK_NOT_INDEXED, f"gone/{i}.md", tuple(f"q{j}" for j in range(25)),
                    "missing", "no such file in the KB")
        for i in range(11)
    ]  # fmt: skip
    text = path_text(paths, where="see --full").splitlines()
    assert len(text) == 1 + 10 * 2 + 1 + 1
    assert text[2] == "    expected by: q0, q1, q2, q3, q4, q5, q6, q7, q8, q9 ... and 15 more"
    assert text[-2] == "  ... and 1 more paths (see --full)"
    assert len(path_text(paths, full=True).splitlines()) == 1 + 11 * 2 + 1

    shared = DuplicateIdFinding(CHECK_DUPLICATE_ID, "same", tuple(range(2, 40, 2)), False)
    (line,) = [x for x in duplicate_id_text([shared]).splitlines() if "'same'" in x]
    lines_shown = "2, 4, 6, 8, 10, 12, 14, 16, 18, 20 ... and 9 more"
    assert line == f"  query id 'same' names 19 queries (lines {lines_shown})"
    assert shared.summary.endswith("36, 38)")  # the finding itself (Markdown, JSON) is whole
    assert warning_texts([*quoted, *paths, shared]) == [
        quoted_text(quoted), path_text(paths), duplicate_id_text([shared])
    ]  # fmt: skip


def test_a_reorganisation_that_removed_150_expected_documents(
    indexed_kb,
    golden_en: Path,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    kb = indexed_kb("kb_en")
    queries = yaml.safe_load(golden_en.read_text(encoding="utf-8"))["queries"]
    # 150 expected documents that are gone: 140 from a removed folder, expected by two
    # queries each, 10 whose file now lives in another folder (a "did you mean" each);
    # one of them is expected by every query of the removed folder
    indexed = sorted({e["path"] for q in queries for e in q["expected"]})
    moved = [f"old/{p}" for p in indexed] + [f"old/extra-{i}/{indexed[0]}" for i in range(10)]
    moved = moved[:10]
    gone = [f"archive/note-{i:03}.md" for i in range(140)]
    for i in range(70):
        expected = [{"path": gone[2 * i]}, {"path": gone[2 * i + 1]}, {"path": moved[0]}]
        queries.append(
            {"id": f"archived-{i:02}", "query": f"archived question {i}", "expected": expected}
        )
    for i, path in enumerate(moved[1:], start=1):
        queries.append(
            {"id": f"moved-{i}", "query": f"moved question {i}", "expected": [{"path": path}]}
        )
    golden = tmp_path / "reorganised.yml"
    golden.write_text(yaml.safe_dump({"queries": queries}), encoding="utf-8")
    base = ["eval", "--kb-path", str(kb), "--golden", str(golden)]
    runner = CliRunner()

    first = runner.invoke(cli, base)
    assert first.exit_code == 0, first.stderr
    lines = first.stderr.splitlines()
    assert len(lines) <= 60, len(lines)
    assert lines[0] == (
        "groove eval: 150 expected path(s) in the golden file are not in the index "
        "(golden-path-not-indexed)."
    )
    assert "  ... and 140 more paths (--full lists them all, --format json has every one)" in lines
    assert sum(line.startswith("    did you mean ") for line in lines) <= 30
    assert any(line.endswith(" ... and 60 more") for line in lines)  # moved[0]: 70 queries

    full = runner.invoke(cli, [*base, "--full"])
    assert full.exit_code == 0
    for path in [*gone, *moved]:
        assert f"  {path}: " in full.stderr
    assert "... and" not in full.stderr
    assert f"    expected by: {', '.join(f'archived-{i:02}' for i in range(70))}" in full.stderr

    document = json.loads(runner.invoke(cli, [*base, "--format", "json"]).stdout)
    unindexed = [f for f in document["findings"] if f["check"] == CHECK_NOT_INDEXED]
    assert sorted(f["path"] for f in unindexed) == sorted([*gone, *moved])
    by_path = {f["path"]: f["queries"] for f in unindexed}
    assert by_path[moved[0]] == [f"archived-{i:02}" for i in range(70)]
