"""``groove golden apply``: relevant judgements join ``expected``; every other byte stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from groove.golden.judgements import Judgement, Judgements
from groove.golden.queries import load_golden
from groove.judging.apply import apply
from groove.metrics import Expected

WHEN = "2026-12-01T15:00:00+00:00"

COMMENTED = """\
# Team wiki golden set — reviewed 2026-11 by the search guild.
# Keep ids stable: the history pairs runs by them.
defaults:
  limit: 10   # reserved

queries:
  # deploys ------------------------------------------------------------
  - id: deploy-freeze
    query: "When are production deploys frozen before a release?"
    tags: [release]
    expected:
      - path: runbooks/release.md
        heading: "Freeze window"     # the section, not the whole runbook
      - path: 'policies/change.md'   # single-quoted on purpose

    # a comment about the next query, after a blank line
  - query: "カナリアリリースで最初に流すトラフィックの割合は？"
    expected:
    -   path: runbooks/canary.ja.md
    # trailing comment inside the list

  - id: flow
    query: backups
    expected: [{path: data/backup.md}]   # flow style
"""


def _j(query_id: str, path: str, heading: str | None = None, relevant: bool = True) -> Judgement:
    return Judgement(query_id, path, heading, relevant, WHEN, "t")


def test_a_commented_golden_file_keeps_every_byte_but_the_added_entries(tmp_path: Path) -> None:
    golden = tmp_path / "golden.yml"
    golden.write_text(COMMENTED, encoding="utf-8")
    ja = COMMENTED.splitlines()[16].split('"')[1][:32]  # the default id: 32 characters
    judgements = Judgements(
        tmp_path / "golden.judgements.jsonl",
        (
            _j("deploy-freeze", "runbooks/freeze: faq.md", "Who decides?"),
            _j("deploy-freeze", "runbooks/release.md", "freeze WINDOW"),  # already expected
            _j("deploy-freeze", "notes/old.md", relevant=False),  # never added
            _j(ja, "runbooks/canary.md"),
            _j("flow", "data/restore.md", "Point-in-time"),
            _j("gone", "x.md"),  # its query left the golden file
        ),
    )
    result = apply(golden, judgements)
    assert result.written and result.already_expected == 1
    assert result.unknown_queries == ("gone",)
    assert [a.describe() for a in result.added] == [
        "deploy-freeze: + runbooks/freeze: faq.md › Who decides?",
        f"{ja}: + runbooks/canary.md",
        "flow: + data/restore.md › Point-in-time",
    ]
    expected_text = (
        COMMENTED.replace(
            "      - path: 'policies/change.md'   # single-quoted on purpose\n",
            "      - path: 'policies/change.md'   # single-quoted on purpose\n"
            "      - path: 'runbooks/freeze: faq.md'\n"
            '        heading: "Who decides?"\n',  # the file double-quotes its one heading
        )
        .replace(
            "    -   path: runbooks/canary.ja.md\n",
            "    -   path: runbooks/canary.ja.md\n    - path: runbooks/canary.md\n",
        )
        .replace(
            "[{path: data/backup.md}]",
            '[{path: data/backup.md}, {path: data/restore.md, heading: "Point-in-time"}]',
        )
    )
    assert golden.read_text(encoding="utf-8") == expected_text
    loaded = {q.id: q.expected for q in load_golden(golden).queries}
    assert loaded["deploy-freeze"][-1] == Expected("runbooks/freeze: faq.md", "Who decides?")
    assert loaded["flow"][-1] == Expected("data/restore.md", "Point-in-time")
    again = apply(golden, judgements)  # applying twice adds nothing
    assert not again.added and not again.written and again.already_expected == 4


def test_crlf_line_endings_and_a_missing_final_newline_are_kept(tmp_path: Path) -> None:
    golden = tmp_path / "g.yml"
    text = "queries:\r\n  - id: a\r\n    query: q\r\n    expected:\r\n      - path: a.md"
    golden.write_bytes(text.encode())
    apply(golden, Judgements(tmp_path / "j", (_j("a", "b.md", "H"),)))
    assert (
        golden.read_bytes() == (text + "\r\n      - path: b.md\r\n        heading: H\r\n").encode()
    )


def test_dry_run_changes_nothing(tmp_path: Path) -> None:
    golden = tmp_path / "g.yml"
    golden.write_text("queries:\n  - id: a\n    query: q\n    expected:\n      - path: a.md\n")
    before = golden.read_bytes()
    result = apply(golden, Judgements(tmp_path / "j", (_j("a", "b.md"),)), dry_run=True)
    assert not result.written and len(result.added) == 1
    assert result.lines()[0] == f"would add 1 expected entry to 1 query in {golden}"
    assert golden.read_bytes() == before


@pytest.mark.parametrize(
    "block",
    [
        "      - path: a.md\n        heading: |\n          Multi\n",
        "      -\n        path: a.md\n",
    ],
)
def test_unusual_layouts_still_get_a_valid_entry(tmp_path: Path, block: str) -> None:
    golden = tmp_path / "g.yml"
    golden.write_text(
        "queries:\n  - id: a\n    query: q\n    expected:\n"
        + block
        + "  - id: b\n    query: r\n    expected: [{path: z.md}]\n"
    )
    apply(golden, Judgements(tmp_path / "j", (_j("a", "new.md"),)))
    loaded = {q.id: q.expected for q in load_golden(golden).queries}
    assert loaded["a"][-1] == Expected("new.md") and len(loaded["a"]) == 2
    assert loaded["b"] == (Expected("z.md"),)


@pytest.mark.parametrize(
    ("quote", "heading_quote"),
    [('"', '"'), ("'", "'"), ("", "")],
)
def test_added_entries_quote_their_values_as_the_file_does(
    tmp_path: Path, quote: str, heading_quote: str
) -> None:
    """A file that quotes every path (as ``groove golden from-qrels`` and many hand-written
    sets do) gets quoted paths, twice in a row; a plain file stays plain."""
    golden = tmp_path / "g.yml"
    q, h = quote, heading_quote
    text = (
        "queries:\n"
        f"  - id: a\n    query: q\n    expected:\n      - path: {q}docs/1.md{q}\n"
        f"        heading: {h}Intro{h}\n"
        f"  - id: b\n    query: r\n    expected:\n      - path: {q}docs/2.md{q}\n"
    )
    golden.write_text(text)
    apply(golden, Judgements(tmp_path / "j", (_j("a", "docs/491.md", "Results"),)))
    apply(golden, Judgements(tmp_path / "j", (_j("b", "docs/7.md"),)))
    after = golden.read_text()
    assert f"      - path: {q}docs/491.md{q}\n        heading: {h}Results{h}\n" in after
    assert after.endswith(f"      - path: {q}docs/2.md{q}\n      - path: {q}docs/7.md{q}\n")
    loaded = {x.id: x.expected for x in load_golden(golden).queries}
    assert Expected("docs/491.md", "Results") in loaded["a"]
    assert Expected("docs/7.md", None) in loaded["b"]


def test_a_quoted_flow_list_gets_quoted_entries(tmp_path: Path) -> None:
    golden = tmp_path / "g.yml"
    golden.write_text('queries:\n  - id: a\n    query: q\n    expected: [{path: "a.md"}]\n')
    apply(golden, Judgements(tmp_path / "j", (_j("a", "b.md"),)))
    assert golden.read_text().endswith('expected: [{path: "a.md"}, {path: "b.md"}]\n')
