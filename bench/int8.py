"""The int8 copy of the default model (`groove model prepare --int8`) against the float model:
embedding throughput side by side, and nDCG@10 on Cranfield and the test fixtures.

* **Throughput**: Cranfield's chunk texts in ``--slices`` slices; each slice embedded by both
  models back to back (the order alternating), batch 16 as `groove index` embeds; chunks/s of
  each summed over the slices, and their ratio (the load drifts between slices, not within).
* **Quality**: each KB (Cranfield, tests/fixtures kb_en and kb_ja) indexed once per model into
  its own database under bench/.work/int8/ (reused on the next run), then `groove eval` (no
  history) with each: nDCG@10 / recall@10 / MRR, and the int8 - float delta.

    .venv/bin/python bench/int8.py [--dataset ../shared/datasets/cranfield] [--slices 6]
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

from _cranfield import DEFAULT_DATASET, REPO, WORK, indexed_cranfield

from groove.config import Config
from groove.engine.embed import INT8_MODEL, Embedder, load_embedder, prepare_int8_model
from groove.engine.index import build
from groove.evaluation.run import run
from groove.evaluation.settings import resolve_settings
from groove.store.db import connect

FIXTURES = REPO / "tests" / "fixtures"


def load_average() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def chunk_texts(db: Path) -> list[str]:
    conn = connect(db)
    try:
        return [r[0] for r in conn.execute("SELECT content FROM chunks ORDER BY id")]
    finally:
        conn.close()


def throughput(models: dict[str, Embedder], texts: list[str], slices: int) -> dict[str, float]:
    """Chunks per second of each model over the same texts, slice by slice side by side."""
    seconds = dict.fromkeys(models, 0.0)
    size = len(texts) // slices
    names = list(models)
    for i in range(slices):
        part = texts[i * size : (i + 1) * size]
        for name in names if i % 2 == 0 else names[::-1]:
            start = time.perf_counter()
            models[name].embed(part)
            seconds[name] += time.perf_counter() - start
    return {name: size * slices / s for name, s in seconds.items()}


def quality(
    kb_source: Path, golden: Path, label: str, embedder: Embedder, in_place: bool = False
) -> dict[str, float]:
    """The eval's aggregate metrics on a copy of ``kb_source`` indexed with ``embedder``
    (``in_place``: on ``kb_source`` itself, already indexed with it)."""
    kb = kb_source
    if not in_place:
        kb = WORK / "int8" / f"{label}-{embedder.model_id.replace('/', '_')}" / "kb"
        if not kb.is_dir():
            shutil.copytree(kb_source, kb)
        build(kb, embedder)
    settings = resolve_settings(Config(), kb_path=kb, golden=golden, history=False)
    aggregate = run(settings, embedder=embedder).record.aggregate
    return {
        "nDCG@10": aggregate.ndcg_at_k[10],
        "recall@10": aggregate.recall_at_k[10],
        "MRR": aggregate.mrr,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--slices", type=int, default=6)
    parser.add_argument("--texts", type=int, default=1400, help="chunk texts timed")
    args = parser.parse_args()
    kb, golden = indexed_cranfield(args.dataset)
    prepare_int8_model()
    models = {"float": load_embedder(), "int8": load_embedder(INT8_MODEL)}
    texts = chunk_texts(kb.parent / ".groove.db")[: args.texts]
    print(f"at start: {load_average()}")
    rates = throughput(models, texts, args.slices)
    print(f"throughput, {len(texts) // args.slices * args.slices} Cranfield chunks, batch 16:")
    print(f"  float {rates['float']:6.1f} chunks/s   int8 {rates['int8']:6.1f} chunks/s")
    print(f"  int8 / float: {rates['int8'] / rates['float']:.2f}x   ({load_average()})")
    sets = [
        ("cranfield", kb, golden),
        ("kb_en", FIXTURES / "kb_en", FIXTURES / "golden_en.yml"),
        ("kb_ja", FIXTURES / "kb_ja", FIXTURES / "golden_ja.yml"),
    ]
    print("quality (groove eval, default settings):")
    for label, source, gold in sets:
        found = {
            # bench/.work's Cranfield copy is indexed with the float model already
            name: quality(source, gold, label, m, in_place=label == "cranfield" and name == "float")
            for name, m in models.items()
        }
        cells = "   ".join(
            f"{metric} {found['float'][metric]:.4f} -> {found['int8'][metric]:.4f} "
            f"({found['int8'][metric] - found['float'][metric]:+.4f})"
            for metric in ("nDCG@10", "recall@10", "MRR")
        )
        print(f"  {label:10} {cells}")
    print(f"at end: {load_average()}")


if __name__ == "__main__":
    main()
