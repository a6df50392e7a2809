"""``legs`` in the retriever contract: parsing, the schema, and each retriever kind."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from groove.errors import RetrieverError
from groove.retrievers.base import RetrieverQuery
from groove.retrievers.legs import QueryLegs, answer_schema, legs_to_dict, parse_legs
from groove.retrievers.opener import open_retriever
from groove.retrievers.spec import parse_spec

DOCS = Path(__file__).parents[1] / "docs" / "retrievers.md"
LEGS_ADAPTER = Path(__file__).parent / "helpers" / "legs_adapter.py"

GOOD: dict[str, Any] = {
    "hits": [{"path": "a.md", "heading": "X", "score": 0.03}],
    "legs": {
        "lexical": [{"path": "a.md", "heading": "X", "score": 7.5}, {"path": "c.md", "score": 1}],
        "vector": [{"path": "b.md", "heading": None, "score": 0.8}],
    },
}

BAD = [
    ({"hits": [], "legs": []}, "`legs` is not an object"),
    ({"hits": [], "legs": {"lexical": []}}, "`legs.vector` is missing or not a list"),
    ({"hits": [], "legs": {"lexical": [3], "vector": []}}, "`legs.lexical` hit 1 is not a JSON"),
    (
        {"hits": [], "legs": {"lexical": [], "vector": [{"score": 1}]}},
        "`legs.vector` hit 1 has no `path`",
    ),
    (
        {"hits": [], "legs": {"lexical": [], "vector": [{"path": "a", "heading": 1, "score": 1}]}},
        "`legs.vector` hit 1: `heading` is not a string",
    ),
    (
        {"hits": [], "legs": {"lexical": [{"path": "a"}], "vector": []}},
        "`legs.lexical` hit 1: `score` is missing",
    ),
    (
        {"hits": [], "legs": {"lexical": [{"path": "a", "score": "1"}], "vector": []}},
        "`legs.lexical` hit 1: `score` is missing or not a finite number",
    ),
]


def test_parse_legs_reads_both_legs_in_rank_order() -> None:
    legs = parse_legs(GOOD, "q1")
    assert legs is not None
    assert [(h.rank, h.path, h.heading, h.score) for h in legs.lexical] == [
        (1, "a.md", "X", 7.5),
        (2, "c.md", None, 1.0),
    ]
    assert legs.scored("vector") == [(("at", "b.md", None), 0.8)]
    assert legs.depth == 2
    assert parse_legs({"hits": []}, "q1") is None
    assert parse_legs({"legs": legs_to_dict(legs)}, "q1") == legs


@pytest.mark.parametrize(("answer", "message"), BAD)
def test_bad_legs_are_one_line_errors_naming_query_and_hit(
    answer: dict[str, Any], message: str
) -> None:
    with pytest.raises(RetrieverError) as caught:
        parse_legs(answer, "q7")
    assert caught.value.message.startswith("retriever answer for query 'q7': ")
    assert message in caught.value.message
    assert "\n" not in caught.value.message


def test_engine_ids_key_the_legs_when_given() -> None:
    answer = {
        "hits": [],
        "legs": {
            "lexical": [
                {"path": "a.md", "score": 2, "id": 7},
                {"path": "a.md", "score": 1, "id": 8},
            ],
            "vector": [{"path": "a.md", "score": 0.5, "id": "8"}],
        },
    }
    legs = parse_legs(answer, "q1")
    assert legs is not None
    assert legs.scored("lexical") == [(("id", "7"), 2.0), (("id", "8"), 1.0)]
    assert legs.scored("vector") == [(("id", "8"), 0.5)]
    assert legs.labels() == {("id", "8"): ("a.md", None), ("id", "7"): ("a.md", None)}
    assert parse_legs({"legs": legs_to_dict(legs)}, "q1") == legs
    bad = {"hits": [], "legs": {"lexical": [{"path": "a", "score": 1, "id": 1.5}], "vector": []}}
    with pytest.raises(RetrieverError, match="`id` is not a string or an integer"):
        parse_legs(bad, "q1")


def test_schema_file_agrees_with_the_parser_and_the_docs() -> None:
    schema = json.loads(answer_schema())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid(GOOD)
    assert validator.is_valid({"hits": []})
    for answer, _ in BAD:
        assert not validator.is_valid(answer), answer
    # docs/retrievers.md shows the same schema, byte for byte after the marker
    text = DOCS.read_text(encoding="utf-8")
    shown = re.search(r"<!-- answer-schema -->\n```json\n(.*?)\n```", text, re.S)
    assert shown is not None
    assert shown.group(1).strip() == answer_schema().strip()


def _answers(tmp_path: Path) -> Path:
    path = tmp_path / "answers.jsonl"
    rows = [{**GOOD, "id": "q1"}, {"id": "q2", "hits": [{"path": "z.md"}]}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


QUERIES = [RetrieverQuery("q1", "alpha", 10), RetrieverQuery("q2", "beta", 10)]


def test_command_and_run_file_retrievers_keep_the_legs(tmp_path: Path) -> None:
    answers = _answers(tmp_path)
    expected = parse_legs(GOOD, "q1")
    for spec in (f"command:{sys.executable} {LEGS_ADAPTER} {answers}", f"run:{answers}"):
        retriever = open_retriever(parse_spec(spec))
        try:
            hits = retriever.retrieve(QUERIES)
        finally:
            retriever.close()
        assert [h.path for h in hits[0]] == ["a.md"]
        legs: dict[str, QueryLegs] = retriever.legs  # type: ignore[attr-defined]
        # q2's answer has no legs (the adapter adds empty ones; the run file none)
        assert legs["q1"] == expected
        assert "q2" not in legs or legs["q2"] == QueryLegs((), ())


def test_a_bad_leg_from_a_command_stops_the_run(tmp_path: Path) -> None:
    spec = f"command:{sys.executable} {LEGS_ADAPTER} {_answers(tmp_path)} --fault bad-leg --at 2"
    retriever = open_retriever(parse_spec(spec))
    try:
        with pytest.raises(RetrieverError, match=r"query 'q2': `legs.vector` hit 1: `score`"):
            retriever.retrieve(QUERIES)
    finally:
        retriever.close()


def test_a_bad_leg_in_a_run_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({"id": "q1", "hits": [], "legs": {"lexical": []}}) + "\n")
    retriever = open_retriever(parse_spec(f"run:{path}"))
    with pytest.raises(RetrieverError, match=r"line 1: query 'q1': `legs.vector` is missing"):
        retriever.retrieve(QUERIES)


def test_explain_attributes_an_engines_misses_to_its_legs(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from groove.cli import cli

    golden = tmp_path / "golden.yml"
    golden.write_text(
        "queries:\n"
        + "".join(
            f"  - id: {q}\n    query: question {q}\n    expected:\n      - path: {q}.md\n"
            for q in ("buried", "low", "lexical", "nowhere", "found")
        )
    )

    def filler(n: int, tag: str) -> list[dict[str, Any]]:
        return [{"path": f"{tag}{i}.md", "score": 100.0 - i} for i in range(n)]

    def answer(qid: str, lexical: int | None, vector: int | None, hit: bool) -> dict[str, Any]:
        lex, vec = filler(30, "l"), filler(30, "v")
        if lexical is not None:
            lex.insert(lexical - 1, {"path": f"{qid}.md", "score": 50.0})
        if vector is not None:
            vec.insert(vector - 1, {"path": f"{qid}.md", "score": 0.5})
        hits = [{"path": f"{qid}.md"}] if hit else filler(10, "h")
        return {"id": qid, "hits": hits, "legs": {"lexical": lex, "vector": vec}}

    answers = [
        answer("buried", 3, None, False),  # the lexical leg had it at 3: fusion buried it
        answer("low", 15, 20, False),  # both legs, each below k
        answer("lexical", 25, None, False),
        answer("nowhere", None, None, False),
        answer("found", 1, 1, True),
    ]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(a) for a in answers) + "\n")
    out = CliRunner().invoke(
        cli,
        ["eval", "--golden", str(golden), "--format", "json", "--explain",
         "--retriever", f"command:{sys.executable} {LEGS_ADAPTER} {path}"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    causes = {
        q["id"]: [a["cause"] for a in q["attribution"]] if q.get("attribution") else None
        for q in doc["per_query"]
    }
    assert causes == {
        "buried": ["fusion-buried"],
        "low": ["both-low"],
        "lexical": ["lexical-only-low"],
        "nowhere": ["neither-leg"],
        "found": None,
    }
    assert doc["misses_by_cause"] == {
        "fusion-buried": 1, "both-low": 1, "lexical-only-low": 1, "neither-leg": 1,
    }  # fmt: skip
    buried = doc["per_query"][0]["attribution"][0]
    assert (buried["fts_rank"], buried["vector_rank"], buried["pool"]) == (3, None, 31)
