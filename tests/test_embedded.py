"""groove.engine.embedded: query vectors embedded on a worker thread, and the eval that
searches each batch as it arrives (out of golden order) yet reports in golden order."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.hashing import HashingEmbedder

from groove.config import Config
from groove.engine.embedded import batches_of, embedded_ahead, threads_beside_caller
from groove.engine.index import build
from groove.engine.rows import BatchedEmbedder
from groove.evaluation.run import run
from groove.evaluation.settings import resolve_settings
from groove.tuning.reach import PROBE

FIXTURES = Path(__file__).parent / "fixtures"
TEXTS = ["a", "a much longer text than the others", "mid length", "xy", "quite long text", "b"]


class BatchedHashing(BatchedEmbedder):
    """HashingEmbedder's rows, cut into the model's length-sorted batches (of two)."""

    model_id = HashingEmbedder.model_id

    def __init__(self, batch_size: int = 2, fail_at: int | None = None) -> None:
        self._rows = HashingEmbedder()
        self.dim = self._rows.dim
        self.batch_size = batch_size
        self.fail_at = fail_at
        self.calls = 0
        self.threads: set[str] = set()
        self.gate: threading.Event | None = None  # set: batches after the first wait on it

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        self.threads.add(threading.current_thread().name)
        if self.gate is not None and self.calls > 1:
            self.gate.wait(timeout=2.0)
        if self.calls == self.fail_at:
            raise RuntimeError("the model broke on batch 2")
        return self._rows.embed(texts)


def _workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "groove-embed"]


def test_batches_come_in_the_models_order_with_the_rows_one_embed_call_gives() -> None:
    embedder = BatchedHashing()
    with embedded_ahead(embedder, TEXTS) as done:
        received = list(done)
    assert embedder.threads == {"groove-embed"}  # not the caller's thread
    seen = [i for batch, _ in received for i in batch]
    assert seen == [1, 4, 2, 3, 0, 5]  # longest first, not the input order
    rows = np.zeros((len(TEXTS), embedder.dim), dtype=np.float32)
    for batch, batch_rows in received:
        rows[batch] = batch_rows
    assert np.array_equal(rows, embedder.embed(TEXTS))
    assert not _workers()


def test_an_embedder_without_batches_gives_one_batch_and_no_texts_none() -> None:
    assert [batch for batch, _ in batches_of(HashingEmbedder(), TEXTS)] == [list(range(6))]
    assert list(batches_of(HashingEmbedder(), [])) == []
    with embedded_ahead(HashingEmbedder(), []) as done:
        assert list(done) == []


def test_a_model_error_is_raised_in_the_callers_thread_and_the_worker_ends() -> None:
    embedder = BatchedHashing(fail_at=2)
    received = []
    broke = pytest.raises(RuntimeError, match="the model broke on batch 2")
    with broke, embedded_ahead(embedder, TEXTS) as done:
        for batch, _ in done:
            received.append(batch)
    assert received == [[1, 4]]
    assert not _workers()


def test_leaving_early_stops_the_worker_after_its_current_batch() -> None:
    embedder = BatchedHashing()
    embedder.gate = threading.Event()  # never set: the second batch waits out its timeout
    with embedded_ahead(embedder, TEXTS) as done:
        next(done)
    assert embedder.calls == 2  # the batch under way was finished, no third one begun
    assert not _workers()


def test_threads_beside_caller_leave_one_core_to_the_caller() -> None:
    import os

    cores = len(os.sched_getaffinity(0))
    assert threads_beside_caller() == max(1, cores - 1)


def test_the_real_models_batches_give_the_rows_of_one_embed_call(real_embedder: Any) -> None:
    texts = [*TEXTS, "how do I roll back a deploy", "バックアップの保持期間"] * 5
    rows = np.zeros((len(texts), real_embedder.dim), dtype=np.float32)
    with embedded_ahead(real_embedder, texts) as done:
        batches = 0
        for batch, batch_rows in done:
            rows[batch] = batch_rows
            batches += 1
    assert batches > 1
    expected = real_embedder.embed(texts)
    assert np.array_equal(rows.view(np.uint32), expected.view(np.uint32))  # bit for bit


# ---------------------------------------------------------------- the eval over batches


def _golden_with_a_repeated_id(path: Path) -> Path:
    """The fixture set, its queries of unlike lengths, and a repeated id (first one kept)."""
    text = (FIXTURES / "golden_en.yml").read_text(encoding="utf-8")
    text += (
        "\n  - id: rollback-when\n"
        '    query: "canary traffic share"\n'
        "    expected:\n"
        "      - path: data/backup.md\n"
    )
    path.write_text(text, encoding="utf-8")
    return path


def _ids_in_golden_order(golden: Path) -> list[str]:
    import yaml

    return [q["id"] for q in yaml.safe_load(golden.read_text(encoding="utf-8"))["queries"]]


@pytest.mark.parametrize("explain", [False, True])
def test_an_eval_over_batches_out_of_order_reports_as_one_in_golden_order(
    tmp_path: Path, explain: bool
) -> None:
    kb = tmp_path / "kb"
    shutil.copytree(FIXTURES / "kb_en", kb)
    build(kb, HashingEmbedder())
    golden = _golden_with_a_repeated_id(tmp_path / "golden.yml")

    settings = resolve_settings(
        Config(), kb_path=kb, golden=golden, history=False, explain=explain, k_values=[1]
    )
    batched = BatchedHashing(batch_size=3)
    arrived: list[str] = []

    def searched(progress: Any) -> None:
        if progress.stage == "search":
            arrived.append(progress.item)

    pipelined = run(settings, embedder=batched, grid=PROBE, progress=searched)
    whole = run(settings, embedder=HashingEmbedder(), grid=PROBE)  # one batch: golden order
    order = _ids_in_golden_order(golden)
    assert batched.calls > 1 and arrived != order  # the batches did come out of order
    assert sorted(arrived) == sorted(order)
    assert [q.id for q in pipelined.per_query] == order
    assert pipelined.per_query == whole.per_query
    assert list(pipelined.query_timings) == list(dict.fromkeys(order))
    if explain:
        assert pipelined.attribution is not None and pipelined.attribution
        assert whole.attribution is not None
        assert list(pipelined.attribution) == list(whole.attribution)
        assert pipelined.attribution == whole.attribution
        # the repeated id keeps its first query's attributions (its answer is ops/rollback.md)
        first = pipelined.attribution.get("rollback-when", ())
        assert all(a.path != "data/backup.md" for a in first)
    else:
        assert pipelined.attribution is None
