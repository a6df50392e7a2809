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
* significant, as before this test was one-sided: some metric fell by more than 0.05 and
  its two-sided sign-flip p, Holm-corrected over the seven, is below alpha = 0.05;
* significant, one-sided + Holm: the same with the one-sided p of a drop;
* significant, one-sided + max-T (the shipped gate): some metric fell by more than 0.05
  and its p(drop), adjusted by the step-down max-T over the seven (each query's seven
  deltas flipped together, groove.stats.familywise), is below alpha;
* the drop test alone: some metric's adjusted p(drop) is below alpha, whatever the size of
  the fall (what "real, but under the threshold" reports; its false-alarm rate is the
  familywise error rate of the test, which must stay at or below alpha).

The p-values are the shipping tests' (exact up to 16 non-zero deltas, else 10,000 sign
flips), computed for all replications at once; the first replications of each cell are
checked against groove.stats.significance.sign_flip_p and
groove.stats.familywise.max_t_drop.

    .venv/bin/python bench/gate_simulation.py [--reps 1000] [--cranfield DIR]
        [--sizes 8 15 50 225] [--drops 0 0.02 0.05 0.1] [--floor [--steps 5]]
    .venv/bin/python bench/gate_simulation.py --slices [--reps 300]

``--floor``: the false alarms of both gates with the accepted baseline (the floor), in
sequences of runs rather than pairs. A golden set of N queries is drawn once per
replication; then a first run (the floor) and ``--steps`` more, each an independent draw
of which configuration answers each query (no true change anywhere). Each later run is
judged against the newest earlier run that passed and, with the floor, against the first
run too; a fall beyond the threshold against either is a false alarm. The table sets the
pair rates above (the documented ones, drawn again here) beside the per-run rates of the
same gate in sequences without and with the floor.

``--slices``: the slice gate's false alarms instead (no true change). Each simulated golden
set of N queries is split into S equal slices (tags); a pair is drawn as above and judged
per slice on the seven metrics by the threshold rule (any slice of at least 10 queries fell
by more than 0.05), by the significant rule adjusted within each slice only (max-T over its
seven metrics, as if each slice were its own golden set), and by the shipped slice gate
(max-T over slices x metrics, groove.stats.slices). The first replications of each cell are
also judged by groove.stats.slices.decide_slices on real RunRecords and must agree.

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

from groove.stats.familywise import max_t_drop
from groove.stats.gate import DEFAULT_ALPHA
from groove.stats.significance import (
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
SIZES = (8, 15, 50, 225)
DROPS = (0.0, 0.02, 0.05, 0.10)
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


def _clean(deltas: np.ndarray) -> np.ndarray:
    return np.where(np.abs(deltas) > ZERO_EPS, deltas, 0.0)


def batch_p_values(deltas: np.ndarray, alternative: str = "two-sided", seed: int = 1) -> np.ndarray:
    """The shipping sign-flip p (two-sided, or one-sided ``less``) for every (rep, metric)
    row of ``deltas`` (last axis = queries).

    Zeros add nothing to a signed sum, so enumerating or drawing signs over all n queries
    gives the same p as over the non-zero ones: one sign matrix serves every row."""
    reps, metrics, n = deltas.shape
    clean = _clean(deltas.reshape(-1, n))
    nonzero = (clean != 0.0).sum(axis=1)
    one_sided = alternative == "less"
    total = clean.sum(axis=1)
    observed = -total if one_sided else np.abs(total)
    bar = observed - 1e-9 * np.maximum(np.abs(observed), np.abs(clean).sum(axis=1))

    def count(signs: np.ndarray, rows: np.ndarray) -> np.ndarray:
        sums = signs @ clean[rows].T
        return ((-sums if one_sided else np.abs(sums)) >= bar[rows]).sum(axis=0)

    p = np.ones(clean.shape[0])
    exact = (nonzero <= EXACT_MAX_NONZERO) & (nonzero > 0)
    if exact.any():
        if n <= EXACT_MAX_NONZERO:
            hits = np.zeros(int(exact.sum()), dtype=np.int64)
            for signs in _all_signs(n):
                hits += count(signs, exact)
            p[exact] = hits / (1 << n)
        else:
            p[exact] = [sign_flip_p(row, alternative=alternative)[0] for row in clean[exact]]
    monte = nonzero > EXACT_MAX_NONZERO
    if monte.any():
        hits = np.zeros(int(monte.sum()), dtype=np.int64)
        for signs in _drawn_signs(n, seed):
            hits += count(signs, monte)
        p[monte] = (1 + hits) / (1 + SIGN_FLIPS)
    return p.reshape(reps, metrics)


def _all_signs(n: int, chunk: int = 2048):  # type: ignore[no-untyped-def]
    """Every sign vector of length n, in chunks."""
    bits = np.arange(n, dtype=np.int64)
    for start in range(0, 1 << n, chunk):
        codes = np.arange(start, min(start + chunk, 1 << n), dtype=np.int64)
        yield 1.0 - 2.0 * ((codes[:, np.newaxis] >> bits) & 1)


def _drawn_signs(n: int, seed: int, chunk: int = 1000):  # type: ignore[no-untyped-def]
    """SIGN_FLIPS random sign vectors of length n, in chunks."""
    rng = np.random.default_rng(seed)
    for start in range(0, SIGN_FLIPS, chunk):
        yield 1.0 - 2.0 * rng.integers(0, 2, size=(min(chunk, SIGN_FLIPS - start), n))


def batch_max_t(deltas: np.ndarray, seed: int = 1) -> np.ndarray:
    """The shipping gate's adjusted p(drop) (familywise.max_t_drop) for every rep at once:
    (reps, metrics), each rep's metrics flipped together."""
    reps, metrics, n = deltas.shape
    d = _clean(np.transpose(deltas, (0, 2, 1)))  # (reps, n, metrics)
    scale = np.sqrt((d**2).sum(axis=1))  # (reps, metrics)
    live = scale > 0.0
    x = np.where(live[:, np.newaxis, :], d / np.where(live, scale, 1.0)[:, np.newaxis, :], 0.0)
    observed = np.where(live, -x.sum(axis=1), -np.inf)
    order = np.argsort(-observed, axis=1, kind="stable")
    x = np.take_along_axis(x, order[:, np.newaxis, :], axis=2)
    bar = np.take_along_axis(observed, order, axis=1) - 1e-9
    dead = ~np.take_along_axis(live, order, axis=1)  # constant metrics: never "at least as far"
    moved = (d != 0.0).any(axis=2).sum(axis=1)  # queries moved in some metric
    flat = x.transpose(1, 0, 2).reshape(n, reps * metrics)

    def count(signs: np.ndarray) -> np.ndarray:
        stats = -(signs @ flat).reshape(-1, reps, metrics)
        stats = np.where(dead, -np.inf, stats)
        later_max = np.maximum.accumulate(stats[:, :, ::-1], axis=2)[:, :, ::-1]
        return (later_max >= bar).sum(axis=0)

    hits = np.zeros((reps, metrics), dtype=np.int64)
    exact_rows = moved <= EXACT_MAX_NONZERO
    if n <= EXACT_MAX_NONZERO:
        for signs in _all_signs(n, chunk=512):
            hits += count(signs)
        p_sorted = hits / (1 << n)
    else:
        for signs in _drawn_signs(n, seed):
            hits += count(signs)
        p_sorted = (1 + hits) / (1 + SIGN_FLIPS)
    p_sorted = np.minimum(np.maximum.accumulate(p_sorted, axis=1), 1.0)
    p = np.ones((reps, metrics))
    np.put_along_axis(p, order, np.where(np.take_along_axis(live, order, axis=1), p_sorted, 1.0), 1)
    if n > EXACT_MAX_NONZERO:  # few moved queries in a large set: exact, as the gate does
        for r in np.flatnonzero(exact_rows):
            p[r] = max_t_drop(deltas[r].T)[0]
    return p


def gate_rates(deltas: np.ndarray, alpha: float) -> dict[str, float]:
    """How often each rule fires, as fractions of the replications."""
    fell = -deltas.mean(axis=2) > THRESHOLD  # (reps, 7)
    two_sided = batch_p_values(deltas)
    one_sided = batch_p_values(deltas, alternative="less")
    holm_two = np.array([holm(row.tolist()) for row in two_sided])
    holm_one = np.array([holm(row.tolist()) for row in one_sided])
    max_t = batch_max_t(deltas)
    return {
        "threshold": float(fell.any(axis=1).mean()),
        "holm_two": float((fell & (holm_two < alpha)).any(axis=1).mean()),
        "holm_one": float((fell & (holm_one < alpha)).any(axis=1).mean()),
        "max_t": float((fell & (max_t < alpha)).any(axis=1).mean()),
        "real": float((max_t < alpha).any(axis=1).mean()),
    }


# Two independent estimates from 10,000 draws each differ by a standard deviation of up to
# sqrt(2 * 0.25 / 10,000) = 0.007 (at p = 0.5); the check runs thousands of times per
# table, so it allows about 5.5 of them.
MC_TOLERANCE = 0.04


def check_against_shipping(deltas: np.ndarray, count: int = 5) -> None:
    """Exact rows must match the shipping functions exactly; Monte Carlo rows within noise."""
    rows = deltas[:count]
    for alternative in ("two-sided", "less"):
        p = batch_p_values(rows, alternative=alternative)
        for r in range(rows.shape[0]):
            for m in range(rows.shape[1]):
                shipped, exact = sign_flip_p(rows[r, m], alternative=alternative)
                tolerance = 1e-12 if exact else MC_TOLERANCE
                if abs(shipped - p[r, m]) > tolerance:
                    raise SystemExit(f"batch p {p[r, m]} != shipping p {shipped} ({alternative})")
    adjusted = batch_max_t(rows)
    for r in range(rows.shape[0]):
        shipped, exact = max_t_drop(rows[r].T)
        tolerance = 1e-12 if exact else MC_TOLERANCE
        if np.abs(np.array(shipped) - adjusted[r]).max() > tolerance:
            raise SystemExit(f"batch max-T {adjusted[r]} != shipping {shipped}")


COLUMNS = (
    ("threshold", "threshold gate"),
    ("holm_two", "significant, two-sided + Holm (before)"),
    ("holm_one", "significant, one-sided + Holm"),
    ("max_t", "significant, one-sided + max-T (shipped)"),
    ("real", "drop test alone (max-T p < alpha)"),
)


# ---------------------------------------------------------------- the slice gate

SLICE_CELLS = ((40, 2), (40, 4), (100, 4), (100, 10), (225, 5), (225, 15))
SLICE_MIN_QUERIES = 10


def _slice_columns(d: np.ndarray, slices: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """(queries, slices x metrics) deltas, 0 outside each slice; and each slice's rows.
    ``d`` is (metrics, n); query i is in slice i % slices."""
    n = d.shape[1]
    members = [np.arange(n) % slices == s for s in range(slices)]
    columns = [np.where(m, d[j], 0.0) for m in members for j in range(d.shape[0])]
    return np.stack(columns, axis=1), members


def slice_rates(deltas: np.ndarray, slices: int, alpha: float) -> dict[str, float]:
    """How often each slice rule fires (fractions of the replications)."""
    fires = {"slice_threshold": 0, "slice_per_slice": 0, "slice_max_t": 0, "slice_real": 0}
    metrics = deltas.shape[1]
    for d in deltas:
        columns, members = _slice_columns(d, slices)
        gated = [m for m in members if m.sum() >= SLICE_MIN_QUERIES]
        index = [s for s, m in enumerate(members) if m.sum() >= SLICE_MIN_QUERIES]
        if not gated:
            continue
        fell = np.array([[-d[j][m].mean() > THRESHOLD for j in range(metrics)] for m in gated])
        keep = [s * metrics + j for s in index for j in range(metrics)]
        family, _ = max_t_drop(columns[:, keep])
        p_family = np.array(family).reshape(len(gated), metrics)
        p_each = np.array([max_t_drop(d[:, m].T)[0] for m in gated])
        fires["slice_threshold"] += bool(fell.any())
        fires["slice_per_slice"] += bool((fell & (p_each < alpha)).any())
        fires["slice_max_t"] += bool((fell & (p_family < alpha)).any())
        fires["slice_real"] += bool((p_family < alpha).any())
    return {k: v / deltas.shape[0] for k, v in fires.items()}


def _record(scores: np.ndarray, slices: int, stamp: str):  # type: ignore[no-untyped-def]
    """A RunRecord whose query i has the seven metrics ``scores[:, i]`` and tag i % slices."""
    from groove.metrics import Expected, QueryMetrics, aggregate
    from groove.runs.fingerprint import Fingerprint
    from groove.runs.record import QueryResult, RunRecord

    ks = (1, 5, 10)
    queries = []
    for i in range(scores.shape[1]):
        r1, r5, r10, mrr, n1, n5, n10 = (float(v) for v in scores[:, i])
        m = QueryMetrics({1: r1, 5: r5, 10: r10}, mrr, {1: n1, 5: n5, 10: n10})
        tag = (f"s{i % slices}",)
        queries.append(QueryResult(f"q{i}", "", (Expected("x.md"),), (), m, None, tag))
    agg = aggregate([(q.expected, q.metrics) for q in queries], ks)
    return RunRecord(
        stamp, Fingerprint("m", None, 10, ks, "h", 1, 1), None, tuple(queries), agg, ()
    )


def check_slices_against_shipping(
    pool: np.ndarray, n: int, slices: int, alpha: float, seed: int, count: int = 3
) -> None:
    """The batch rule must give decide_slices' verdict on the same pairs."""
    from groove.stats.slices import decide_slices, define_slices

    rng = np.random.default_rng(seed)
    for _ in range(count):
        rows = rng.integers(0, pool.shape[0], size=n)
        swap = rng.integers(0, 2, size=n)
        before = pool[rows, swap].T  # (7, n)
        after = pool[rows, 1 - swap].T
        old = _record(before, slices, "2026-01-01T00:00:00+00:00")
        new = _record(after, slices, "2026-01-02T00:00:00+00:00")
        gate = decide_slices(
            new, old, define_slices(new.per_query), mode="significant",
            threshold=THRESHOLD, alpha=alpha, min_queries=SLICE_MIN_QUERIES,
        )  # fmt: skip
        batch = slice_rates((after - before)[np.newaxis], slices, alpha)["slice_max_t"]
        if gate.regressed != bool(batch):
            raise SystemExit(
                f"slice gate {gate.regressed} != batch rule {batch} (N={n}, S={slices})"
            )


SLICE_COLUMNS = (
    ("slice_threshold", "threshold per slice"),
    ("slice_per_slice", "significant, max-T within each slice only"),
    ("slice_max_t", "significant, max-T over slices x metrics (shipped)"),
    ("slice_real", "drop test alone over slices x metrics"),
)


def slices_main(args: argparse.Namespace) -> None:
    pools = {"Cranfield": cranfield_pool(args.cranfield), "fixtures": fixture_pool()}
    start = time.perf_counter()
    print(f"{args.reps} simulated pairs per cell, no true change; slices of at least ", end="")
    print(f"{SLICE_MIN_QUERIES} queries gated; threshold {THRESHOLD}, alpha {args.alpha}")
    print()
    print("| pool | N | slices (queries each) | " + " | ".join(t for _, t in SLICE_COLUMNS) + " |")
    print("|---|---:|---:|" + "---:|" * len(SLICE_COLUMNS))
    seed = 1000
    cells = [("Cranfield", n, s) for n, s in SLICE_CELLS] + [("fixtures", 20, 2)]
    for name, n, slices in cells:
        seed += 1
        pool = pools[name]
        check_slices_against_shipping(pool, n, slices, args.alpha, seed)
        deltas = draw_deltas(pool, n, 0.0, args.reps, seed)
        fires = slice_rates(deltas, slices, args.alpha)
        shown = " | ".join(f"{100 * fires[key]:.1f}%" for key, _ in SLICE_COLUMNS)
        print(f"| {name} | {n} | {slices} ({n // slices}) | {shown} |", flush=True)
    print()
    print(f"wall time {time.perf_counter() - start:.0f} s")


def draw_sequences(pool: np.ndarray, n: int, steps: int, reps: int, seed: int) -> np.ndarray:
    """(reps, steps + 1, n, 7): runs over one drawn golden set per replication, each query
    of each run answered by a configuration a fair coin picks (the null: nothing changes)."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, pool.shape[0], size=(reps, 1, n))
    config = rng.integers(0, 2, size=(reps, steps + 1, n))
    return pool[np.broadcast_to(rows, config.shape), config]


def _fails(deltas: np.ndarray, alpha: float) -> dict[str, np.ndarray]:
    """(reps,) booleans: does each gate fail each pair of ``deltas`` (reps, 7, n)?"""
    fell = -deltas.mean(axis=2) > THRESHOLD
    live = fell.any(axis=1)
    significant = np.zeros(deltas.shape[0], dtype=bool)
    if live.any():  # the drop test only where some metric fell beyond the threshold
        p = batch_max_t(deltas[live])
        significant[live] = (fell[live] & (p < alpha)).any(axis=1)
    return {"threshold": live, "max_t": significant}


def floor_rates(runs: np.ndarray, alpha: float) -> dict[str, float]:
    """Per gated run, how often each gate fails a run of the null sequence ``runs``,
    without the floor (``<gate>``) and with it (``<gate>+floor``)."""
    reps, total = runs.shape[0], runs.shape[1]
    every = np.arange(reps)
    out: dict[str, float] = {}
    for gate in ("threshold", "max_t"):
        for floor in (False, True):
            previous = np.zeros(reps, dtype=np.int64)  # the newest run that passed
            alarms = 0
            for step in range(1, total):
                now = runs[:, step]
                failed = _fails(np.transpose(now - runs[every, previous], (0, 2, 1)), alpha)[gate]
                if floor:
                    against = np.transpose(now - runs[:, 0], (0, 2, 1))
                    failed = failed | _fails(against, alpha)[gate]
                alarms += int(failed.sum())
                previous = np.where(failed, previous, step)
            out[gate + ("+floor" if floor else "")] = alarms / (reps * (total - 1))
    return out


def floor_table(pools: dict[str, np.ndarray], args: argparse.Namespace) -> None:
    print(f"{args.reps} sequences of a first run and {args.steps} more per cell; ", end="")
    print(f"threshold {THRESHOLD}, alpha {args.alpha}; false alarms per gated run")
    print()
    head = (
        "| pool | N | threshold: pairs | sequences | sequences + floor "
        "| significant: pairs | sequences | sequences + floor |"
    )
    print(head)
    print("|---|---:|" + "---:|" * 6)
    seed = 100
    for name, pool in pools.items():
        for n in args.sizes:
            seed += 1
            pairs = draw_deltas(pool, n, 0.0, args.reps, seed)
            paired = {k: float(v.mean()) for k, v in _fails(pairs, args.alpha).items()}
            rates = floor_rates(draw_sequences(pool, n, args.steps, args.reps, seed), args.alpha)
            cells = [
                paired["threshold"], rates["threshold"], rates["threshold+floor"],
                paired["max_t"], rates["max_t"], rates["max_t+floor"],
            ]  # fmt: skip
            print(f"| {name} | {n} | " + " | ".join(f"{100 * c:.1f}%" for c in cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000, help="pairs per cell")
    parser.add_argument("--cranfield", type=Path, default=None, help="indexed Cranfield folder")
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--drops", type=float, nargs="+", default=list(DROPS))
    parser.add_argument("--slices", action="store_true", help="the slice gate's false alarms")
    parser.add_argument("--floor", action="store_true", help="the gates with the floor")
    parser.add_argument("--steps", type=int, default=5, help="runs after the floor (--floor)")
    args = parser.parse_args()
    if args.slices:
        slices_main(args)
        return
    pools = {"Cranfield": cranfield_pool(args.cranfield), "fixtures": fixture_pool()}
    start = time.perf_counter()
    if args.floor:
        floor_table(pools, args)
        print(f"\nwall time {time.perf_counter() - start:.0f} s")
        return
    print(f"{args.reps} simulated pairs per cell; gates over {len(LABELS)} metrics; ", end="")
    print(f"threshold {THRESHOLD}, alpha {args.alpha}")
    for name, pool in pools.items():
        print(
            f"pool {name}: {pool.shape[0]} queries, mean nDCG@10 {pool[:, :, PRIMARY].mean():.3f}"
        )
    print()
    print("| pool | N | true drop of nDCG@10 | " + " | ".join(t for _, t in COLUMNS) + " |")
    print("|---|---:|---:|" + "---:|" * len(COLUMNS))
    seed = 0
    for name, pool in pools.items():
        for n in args.sizes:
            for drop in args.drops:
                seed += 1
                deltas = draw_deltas(pool, n, drop, args.reps, seed)
                check_against_shipping(deltas)
                fires = gate_rates(deltas, args.alpha)
                kind = "false alarms" if drop == 0 else "power"
                cells = " | ".join(f"{100 * fires[key]:.1f}%" for key, _ in COLUMNS)
                print(f"| {name} | {n} | {drop:.2f} ({kind}) | {cells} |", flush=True)
    print()
    print(f"wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
