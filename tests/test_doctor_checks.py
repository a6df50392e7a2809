"""The doctor's rules on a hand-made index view (no model), its checks of the golden set,
and the history's memory of the expected files over several runs."""

from __future__ import annotations

from pathlib import Path

from groove.golden.answers import AnswerSketch, AnswerUpdate, SketchedChunk
from groove.golden.doctor import IndexView, diagnose
from groove.golden.doctor_checks import (
    duplicate_checks,
    empty_section_checks,
    opposite_judgement_checks,
)
from groove.golden.judgements import Judgement, Judgements
from groove.golden.proposals import (
    CHECK_DUPLICATE_QUERY,
    CHECK_NEAR_DUPLICATE_QUERY,
    CHECK_OPPOSITE_JUDGEMENTS,
    DELETED,
    EMPTY,
    LIKELY,
    MERGED,
    NONE,
)
from groove.golden.queries import GoldenQuery
from groove.history.history import append_run, load_history
from groove.metrics import AggregateMetrics, Expected
from groove.runs.fingerprint import Fingerprint
from groove.runs.record import RunRecord
from groove.store.digests import DigestedChunk, body_digest


def _view(*files: tuple[str, list[tuple[str | None, str]]]) -> IndexView:
    chunks = []
    for path, sections in files:
        for i, (heading, body) in enumerate(sections):
            chunks.append(DigestedChunk(len(chunks) + 1, path, i, heading, body, body_digest(body)))
    return IndexView(tuple(chunks))


def _sketch(path: str, sections: list[tuple[str | None, str]]) -> AnswerSketch:
    return AnswerSketch(path, "t0", tuple(SketchedChunk(h, body_digest(b)) for h, b in sections))


def _query(qid: str, *entries: Expected, text: str = "") -> GoldenQuery:
    return GoldenQuery(qid, text or f"question {qid}", entries, (), 1)


A = [(None, "lead of a"), ("One", "first body of a, long enough"), ("Two", "second body")]


def test_identical_copies_are_never_certain() -> None:
    view = _view(("x/a.md", A), ("y/a.md", A))
    (p,) = diagnose([_query("q", Expected("a.md"))], view, {"a.md": _sketch("a.md", A)})
    assert p.confidence == LIKELY and "identical copies" in p.evidence


def test_a_short_section_merged_above_and_an_empty_one() -> None:
    merged = [("Top", "top body\n\n## Small\n\ntiny\n\n## Empty\n")]
    view = _view(("a.md", merged))
    small, empty = diagnose(
        [_query("s", Expected("a.md", "Small")), _query("e", Expected("a.md", "Empty"))],
        view,
        {},
    )
    assert (small.kind, small.confidence, small.target) == (MERGED, LIKELY, Expected("a.md", "Top"))
    assert (empty.kind, empty.confidence, empty.target) == (EMPTY, NONE, None)


def test_nothing_alike_is_deleted_and_said_so() -> None:
    view = _view(("b.md", [("Else", "unrelated text")]))
    (p,) = diagnose([_query("q", Expected("a.md", "One"))], view, {"a.md": _sketch("a.md", A)})
    assert (p.kind, p.confidence, p.target) == (DELETED, NONE, None)


def test_duplicate_and_near_duplicate_queries() -> None:
    queries = [
        _query("a", Expected("x.md"), text="How do I roll back a release?"),
        _query("b", Expected("x.md"), text="how do I roll back a release"),
        _query("c", Expected("x.md"), text="How do I roll back a release to the last build?"),
        _query("d", Expected("x.md"), text="How do I roll back a release to the previous build?"),
        _query("e", Expected("x.md"), text="What does severity one mean?"),
        _query("f", Expected("x.md"), text="What does severity two mean?"),
    ]
    found = {(c.check, c.query_ids) for c in duplicate_checks(queries)}
    assert (CHECK_DUPLICATE_QUERY, ("a", "b")) in found
    assert (CHECK_NEAR_DUPLICATE_QUERY, ("c", "d")) in found
    assert len(found) == 2  # one word apart in five is another question (e, f)


def test_opposite_judgements_on_the_same_or_a_twin_query() -> None:
    queries = [
        _query("a", Expected("x.md", "H"), text="How do I roll back a release?"),
        _query("b", Expected("y.md"), text="how do I roll back a release"),
        _query("c", Expected("x.md", "H"), text="Something else entirely"),
    ]
    judged = Judgements(
        Path("j.jsonl"),
        (
            Judgement("a", "x.md", "H", False, "t", "me"),  # expected and judged not relevant
            Judgement("b", "x.md", "H", False, "t", "me"),  # a's twin judged it not relevant
            Judgement("d", "x.md", "H", False, "t", "me"),  # another question: fine
        ),
    )
    checks = opposite_judgement_checks(queries, judged, duplicate_checks(queries))
    assert [(c.check, c.query_ids) for c in checks] == [
        (CHECK_OPPOSITE_JUDGEMENTS, ("a",)),
        (CHECK_OPPOSITE_JUDGEMENTS, ("a", "b")),
    ]


def test_an_entry_on_an_empty_chunk() -> None:
    view = _view(("a.md", [("Empty", ""), ("Full", "some text here")]))
    checks = empty_section_checks(
        [_query("q", Expected("a.md", "Empty")), _query("r", Expected("a.md", "Full"))], view
    )
    assert [c.query_ids for c in checks] == [("q",)]


def _record(stamp: str) -> RunRecord:
    fp = Fingerprint("m", None, 10, (10,), "g", metric_version=1, fts_query_version=1)
    return RunRecord(stamp, fp, None, (), AggregateMetrics({}, 0.0, {}, 0), ())


def test_the_history_keeps_the_sketch_of_the_last_run_that_found_the_answer(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.json"
    queries = (_query("q", Expected("a.md", "One")),)
    before = _sketch("a.md", A)
    append_run(path, _record("t1"), 10, answers=AnswerUpdate.of({"a.md": before}, queries))
    # the heading was reworded: the fresh sketch lacks it, so the old one stays
    reworded = _sketch("a.md", [(None, "lead of a"), ("Uno", A[1][1]), ("Two", "second body")])
    append_run(path, _record("t2"), 10, answers=AnswerUpdate.of({"a.md": reworded}, queries))
    assert load_history(path).answers == {"a.md": before}
    # a run without sketches (another face) keeps them too
    append_run(path, _record("t3"), 10)
    assert load_history(path).answers == {"a.md": before}
    # once the golden file follows, the fresh sketch replaces it
    fixed = (_query("q", Expected("a.md", "Uno")),)
    append_run(path, _record("t4"), 10, answers=AnswerUpdate.of({"a.md": reworded}, fixed))
    assert load_history(path).answers == {"a.md": reworded}
    # another golden file of the same KB: its paths join, the first one's stay
    other = AnswerSketch("b.md", "t5", (SketchedChunk(None, body_digest("b")),))
    only_b = (_query("q", Expected("b.md")),)
    append_run(path, _record("t5"), 10, answers=AnswerUpdate.of({"b.md": other}, only_b))
    assert load_history(path).answers == {"a.md": reworded, "b.md": other}
    assert [r.timestamp for r in load_history(path).runs] == ["t5", "t4", "t3", "t2", "t1"]


def test_a_pending_notebook_run_carries_its_sketches_into_the_history(tmp_path: Path) -> None:
    from groove.notebooks import pending

    history, result = tmp_path / "history.json", tmp_path / "out" / "result.json"
    result.parent.mkdir()
    update = AnswerUpdate.of({"a.md": _sketch("a.md", A)}, (_query("q", Expected("a.md", "One")),))
    pending.leave(result, _record("t1"), history, 10, update)
    pending.append(pending.pending_path(result))
    assert load_history(history).answers == {"a.md": _sketch("a.md", A)}


def test_the_pair_filter_finds_what_comparing_every_pair_finds() -> None:
    import random

    from groove.golden.doctor_checks import NEAR_DUPLICATE, folded

    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(60)] + ["how", "do", "i", "the", "a"] * 20
    queries = [
        _query(f"q{i}", Expected("a.md"), text=" ".join(rng.choices(vocab, k=rng.randint(1, 9))))
        for i in range(300)
    ]
    queries += [  # near-duplicates on purpose: a word added or swapped
        _query(f"d{i}", Expected("a.md"), text=queries[i].query + " w1") for i in range(0, 60, 3)
    ]
    texts = [folded(q.query) for q in queries]
    words = [frozenset(t.split()) for t in texts]
    every = set()
    for i in range(len(queries)):
        for j in range(i + 1, len(queries)):
            short, long_ = sorted((len(texts[i]), len(texts[j])))
            union = words[i] | words[j]
            near = bool(union) and len(words[i] & words[j]) / len(union) >= NEAR_DUPLICATE
            if texts[i] == texts[j] or (short and long_ <= 1.2 * short and near):
                every.add((queries[i].id, queries[j].id))
    found = {c.query_ids for c in duplicate_checks(queries)}
    assert found == every and len(every) >= 5


def test_sketches_of_paths_no_golden_file_expects_are_bounded(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from groove.golden import answers

    monkeypatch.setattr(answers, "KEEP_OTHERS", 2)
    stored = {
        f"{n}.md": AnswerSketch(f"{n}.md", f"t{n}", (SketchedChunk(None, "d"),)) for n in range(4)
    }
    kept = AnswerUpdate.of({}, (_query("q", Expected("x.md")),)).merged(stored)
    assert sorted(kept) == ["2.md", "3.md"]  # the most recently seen
