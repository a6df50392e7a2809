"""What each regression gate costs: false alarms under no change, power under a real drop.

Per-query scores come from real runs: two configurations (the default pipeline and MMR with
lambda 0.5) evaluated on Cranfield (225 queries) and on the test fixtures (kb_en and kb_ja,
20 queries). A pair of runs is drawn by resampling N queries (with replacement) from one
pool; for each drawn query a fair coin decides which configuration plays "before" and which
"after", so the pair has real per-query noise and no true change (the null). A true drop of
delta is added by breaking each "after" query with probability delta / mean nDCG@10 (all its
metrics set to 0, as when its document stops being found): the expected fall of nDCG@10 is
delta. Each pair is judged on the seven metrics of the diff (recall@1/5/10, MRR,
nDCG@1/5/10) by

* threshold: any metric fell by more than 0.05;
* significant: some metric fell by more than 0.05 and its sign-flip p, Holm-corrected over
  the seven, is below alpha = 0.05.

The p-values are the shipping test's (exact up to 16 non-zero deltas, else 10,000 sign
flips), computed for all replications at once; the first replications of each cell are
checked against groove.evaluation.significance.sign_flip_p.

    .venv/bin/python bench/gate_simulation.py [--reps 1000] [--cranfield DIR]

``--cranfield DIR``: a folder with kb/, golden.yml and an index (.groove.db beside kb/);
default: the indexed copy bench/_cranfield.py builds. Runs are cached in bench/.work/.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import numpy as np
from _cranfield import REPO, WORK, indexed_cranfield

from groove.evaluation.gate import DEFAULT_ALPHA
from groove.evaluation.significance import (
    EXACT_MAX_NONZERO,
    SIGN_FLIPS,
    ZERO_EPS,
    holm,
    sign_flip_p,
)

METRICS = (
    ("recall_at_k", "1"),
    ("recall_at_k", "5"),
    ("recall_at_k", "10"),
    ("mrr", None),
    ("ndcg_at_k", "1"),
    ("ndcg_at_k", "5"),
    ("ndcg_at_k", "10"),
)
LABELS = ("recall@1", "recall@5", "recall@10", "MRR", "nDCG@1", "nDCG@5", "nDCG@10")
PRIMARY = 6  # nDCG@10: the metric whose expected fall is the stated drop
SIZES = (15, 50, 225)
DROPS = (0.0, 0.02, 0.05)
THRESHOLD = 0.05
CONFIGS = {"default": [], "mmr": ["--mmr", "true", "--mmr-lambda", "0.5"]}
FIXTURES = REPO / "tests" / "fixtures"


def _eval_json(kb: Path, golden: Path, extra: list[str], db: Path | None = None) -> dict:
    from click.testing import CliRunner

    from groove.cli import cli

    args = ["eval", "--kb-path", str(kb), "--golden", str(golden), "--no-history"]
    args += ["--format", "json", *extra]
    if db is not None:
        args += ["--db", str(db)]
    result = CliRunner().invoke(cli, args)
    if result.exit_code != 0:
        raise SystemExit(f"groove eval failed: {result.stderr}")
    return json.loads(result.stdout)


def _scores(doc: dict) -> dict[str, np.ndarray]:
    out = {}
    for q in doc["per_query"]:
        m = q["metrics"]
        out[q["id"]] = np.array(
            [m["reciprocal_rank"] if k is None else m[name][k] for name, k in METRICS]
        )
    return out


def _pool(runs: dict[str, dict]) -> np.ndarray:
    """(queries, 2 configs, 7 metrics) over the queries both configurations scored."""
    a, b = _scores(runs["default"]), _scores(runs["mmr"])
    return np.stack([np.stack([a[i], b[i]]) for i in a if i in b])


def _cached(name: str, make: callable) -> dict[str, dict]:  # type: ignore[valid-type]
    path = WORK / "gate_pairs" / f"{name}.json"
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    runs = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(runs), encoding="utf-8")
    return runs


def cranfield_pool(folder: Path | None) -> np.ndarray:
    def make() -> dict[str, dict]:
        if folder is None:
            kb, golden = indexed_cranfield()
        else:
            kb, golden = folder / "kb", folder / "golden.yml"
        return {name: _eval_json(kb, golden, extra) for name, extra in CONFIGS.items()}

    return _pool(_cached("cranfield", make))


def fixture_pool() -> np.ndarray:
    def make() -> dict[str, dict]:
        from groove.engine.embed import load_embedder
        from groove.engine.index import build

        embedder = load_embedder()
        runs: dict[str, dict] = {name: {"per_query": []} for name in CONFIGS}
        for kb_name, golden in (("kb_en", "golden_en.yml"), ("kb_ja", "golden_ja.yml")):
            root = WORK / "fixtures" / kb_name
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(FIXTURES / kb_name, root / "kb")
            build(root / "kb", embedder)
            for name, extra in CONFIGS.items():
                doc = _eval_json(root / "kb", FIXTURES / golden, extra)
                for q in doc["per_query"]:
                    q["id"] = f"{kb_name}/{q['id']}"
                runs[name]["per_query"] += doc["per_query"]
        return runs

    return _pool(_cached("fixtures", make))


def draw_deltas(pool: np.ndarray, n: int, drop: float, reps: int, seed: int) -> np.ndarray:
    """(reps, 7 metrics, n) deltas "after - before" of ``reps`` simulated pairs."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, pool.shape[0], size=(reps, n))
    swap = rng.integers(0, 2, size=(reps, n))
    before = pool[rows, swap]  # (reps, n, 7)
    after = pool[rows, 1 - swap]
    if drop > 0:
        rate = drop / float(pool[:, :, PRIMARY].mean())
        broken = rng.random((reps, n)) < rate
        after = np.where(broken[:, :, np.newaxis], 0.0, after)
    return np.transpose(after - before, (0, 2, 1))


def batch_p_values(deltas: np.ndarray, seed: int = 1) -> np.ndarray:
    """The shipping sign-flip p for every (rep, metric) row of ``deltas`` (last axis = queries).

    Zeros add nothing to a signed sum, so enumerating or drawing signs over all n queries
    gives the same p as over the non-zero ones: one sign matrix serves every row."""
    reps, metrics, n = deltas.shape
    flat = deltas.reshape(-1, n)
    nonzero = (np.abs(flat) > ZERO_EPS).sum(axis=1)
    observed = np.abs(np.where(np.abs(flat) > ZERO_EPS, flat, 0.0).sum(axis=1))
    scale = np.maximum(observed, np.abs(np.where(np.abs(flat) > ZERO_EPS, flat, 0.0)).sum(axis=1))
    bar = observed - 1e-9 * scale
    clean = np.where(np.abs(flat) > ZERO_EPS, flat, 0.0)
    p = np.ones(flat.shape[0])
    exact = (nonzero <= EXACT_MAX_NONZERO) & (nonzero > 0)
    if exact.any():
        if n <= EXACT_MAX_NONZERO:
            codes = np.arange(1 << n, dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, np.newaxis] >> np.arange(n)) & 1)
            hits = (np.abs(signs @ clean[exact].T) >= bar[exact]).sum(axis=0)
            p[exact] = hits / (1 << n)
        else:
            p[exact] = [sign_flip_p(row)[0] for row in clean[exact]]
    monte = nonzero > EXACT_MAX_NONZERO
    if monte.any():
        rng = np.random.default_rng(seed)
        hits = np.zeros(int(monte.sum()), dtype=np.int64)
        for start in range(0, SIGN_FLIPS, 2000):
            size = min(2000, SIGN_FLIPS - start)
            signs = 1.0 - 2.0 * rng.integers(0, 2, size=(size, n))
            hits += (np.abs(signs @ clean[monte].T) >= bar[monte]).sum(axis=0)
        p[monte] = (1 + hits) / (1 + SIGN_FLIPS)
    return p.reshape(reps, metrics)


def gate_rates(deltas: np.ndarray, alpha: float) -> tuple[float, float]:
    """(threshold gate fires, significant gate fires) as fractions of the replications."""
    fell = -deltas.mean(axis=2) > THRESHOLD  # (reps, 7)
    p = batch_p_values(deltas)
    adjusted = np.array([holm(row.tolist()) for row in p])
    significant = fell & (adjusted < alpha)
    return float(fell.any(axis=1).mean()), float(significant.any(axis=1).mean())


def check_against_shipping(deltas: np.ndarray, count: int = 5) -> None:
    """Exact rows must match sign_flip_p exactly; Monte Carlo rows within its noise."""
    p = batch_p_values(deltas[:count])
    for r in range(min(count, deltas.shape[0])):
        for m in range(deltas.shape[1]):
            shipped, exact = sign_flip_p(deltas[r, m])
            tolerance = 1e-12 if exact else 0.02
            if abs(shipped - p[r, m]) > tolerance:
                raise SystemExit(f"batch p {p[r, m]} != shipping p {shipped} (exact={exact})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000, help="pairs per cell")
    parser.add_argument("--cranfield", type=Path, default=None, help="indexed Cranfield folder")
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA)
    args = parser.parse_args()
    pools = {"Cranfield": cranfield_pool(args.cranfield), "fixtures": fixture_pool()}
    start = time.perf_counter()
    print(f"{args.reps} simulated pairs per cell; gates over {len(LABELS)} metrics; ", end="")
    print(f"threshold {THRESHOLD}, alpha {args.alpha}")
    for name, pool in pools.items():
        print(
            f"pool {name}: {pool.shape[0]} queries, mean nDCG@10 {pool[:, :, PRIMARY].mean():.3f}"
        )
    print()
    print("| pool | N | true drop of nDCG@10 | threshold gate fires | significant gate fires |")
    print("|---|---:|---:|---:|---:|")
    seed = 0
    for name, pool in pools.items():
        for n in SIZES:
            for drop in DROPS:
                seed += 1
                deltas = draw_deltas(pool, n, drop, args.reps, seed)
                check_against_shipping(deltas)
                fires = gate_rates(deltas, args.alpha)
                kind = "false alarms" if drop == 0 else "power"
                print(
                    f"| {name} | {n} | {drop:.2f} ({kind}) | {100 * fires[0]:.1f}% "
                    f"| {100 * fires[1]:.1f}% |"
                )
    print()
    print(f"wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
