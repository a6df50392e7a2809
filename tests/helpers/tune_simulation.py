"""The AU-16 and AU-68 simulations behind the 3 x SE adoption gate, reproduced bit for bit.

Generator: a 64-bit LCG ``s <- s * 6364136223846793005 + 1442695040888963407 (mod 2^64)``;
``unit() = ((s >> 11) + 1) / 2^53`` after one step, in (0, 1]; ``normal()`` is the Box-Muller
cosine branch from two fresh uniforms, ``sqrt(-2 ln u1) * cos(2 pi u2)`` (the sine is dropped).

One replication of a setting ``(N, edge, q_sd, cell_sd, seed)``: every condition has mean 0.40
except the true winner (3,1,1,4) = index 322 with ``0.40 + edge`` (it sits at k=60, where
phase W looks). Row by row: ``per_query = q_sd * normal()``, then for each of the 384
conditions in index order ``cell = (mean_c + per_query) + cell_sd * normal()``: 385 normals,
770 LCG steps a row, never clipped. nDCG@5 = recall@5 = RR = cell, all N rows effective.
One stream per setting, seeded once and consumed across replications in order.

AU-16 (first 300 replications, settings 1-4) compares the reported paired SE with the true
spread of the mean delta; AU-68 (2,000 replications, settings 1-5) counts adoptions over a
grid of SE multipliers x mean-delta floors. The names and the numbers these runs must keep
reproducing: docs/architecture.md, "Numbers that must stay bit-identical", and
docs/tune.md, "Why 3 × SE and not 2".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from groove.tuning import stats
from groove.tuning.gates import decide, decide_from, non_degradation
from groove.tuning.grid import N_CONDITIONS, Condition
from groove.tuning.loo import nested_loo
from groove.tuning.table import MetricTable

LCG_MULTIPLIER = 6364136223846793005
LCG_INCREMENT = 1442695040888963407
_MASK = (1 << 64) - 1
_UNIT_SCALE = 1.0 / (1 << 53)
_BLOCK = 1 << 15

BASE_MEAN = 0.40
TRUE_WINNER = Condition(3, 1, 1, 4)
AU16_REPS = 300
AU68_REPS = 2000
AU68_MULTIPLIERS = (2.0, 2.5, 3.0, 3.5, 4.0, 5.0)
AU68_MIN_DELTAS = (0.02, 0.03, 0.04)
AU16_FIRE_MULTIPLIER = 2.0


class ScalarLcg:
    """The generator exactly as defined, one step at a time (the reference for LcgStream)."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def step(self) -> int:
        self.state = (self.state * LCG_MULTIPLIER + LCG_INCREMENT) & _MASK
        return self.state

    def unit(self) -> float:
        return ((self.step() >> 11) + 1) / 2.0**53

    def normal(self) -> float:
        u1 = self.unit()
        u2 = self.unit()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


@lru_cache(maxsize=1)
def _jump_table() -> tuple[np.ndarray, np.ndarray]:
    """``A[i] = a^(i+1)`` and ``C[i]`` with ``s_(i+1) = A[i] * s_0 + C[i] (mod 2^64)``."""
    mults, incs = [], []
    a_n, c_n = 1, 0
    for _ in range(_BLOCK):
        a_n = (a_n * LCG_MULTIPLIER) & _MASK
        c_n = (c_n * LCG_MULTIPLIER + LCG_INCREMENT) & _MASK
        mults.append(a_n)
        incs.append(c_n)
    return np.array(mults, dtype=np.uint64), np.array(incs, dtype=np.uint64)


class LcgStream:
    """The same generator, many steps per call: each block of states is computed from the
    block's starting state by jump-ahead; uint64 arithmetic wraps modulo 2^64."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def steps(self, n: int) -> np.ndarray:
        """The next ``n`` states (the LCG outputs), as uint64."""
        mults, incs = _jump_table()
        out = np.empty(n, dtype=np.uint64)
        for start in range(0, n, _BLOCK):
            size = min(_BLOCK, n - start)
            seed = np.array([self.state], dtype=np.uint64)
            out[start : start + size] = mults[:size] * seed + incs[:size]
            self.state = int(out[start + size - 1])
        return out

    def units(self, n: int) -> np.ndarray:
        """The next ``n`` uniforms in (0, 1]; the +1 and the 2^-53 scaling are exact."""
        return ((self.steps(n) >> np.uint64(11)) + np.uint64(1)).astype(np.float64) * _UNIT_SCALE

    def normals(self, n: int) -> np.ndarray:
        """The next ``n`` standard normals (2n steps), cosine branch of Box-Muller."""
        u = self.units(2 * n)
        return np.sqrt(-2.0 * np.log(u[0::2])) * np.cos(2.0 * math.pi * u[1::2])


@dataclass(frozen=True)
class Setting:
    """One generating process of the study."""

    number: int
    n_queries: int
    edge: float
    query_sd: float
    cell_sd: float
    seed: int
    role: str

    @property
    def label(self) -> str:
        edge = f"e{self.edge:.2f}".replace("0.", ".") if self.edge else "null"
        return f"{self.number} N{self.n_queries} {edge} sd{self.cell_sd:.2f}".replace("0.", ".")


SETTINGS = (
    Setting(1, 26, 0.04, 0.05, 0.08, 0x5EED0001, "real edge, noisy"),
    Setting(2, 26, 0.00, 0.05, 0.08, 0x5EED0002, "null (no winner)"),
    Setting(3, 12, 0.04, 0.05, 0.08, 0x5EED0003, "real edge, small N"),
    Setting(4, 26, 0.04, 0.05, 0.03, 0x5EED0004, "real edge, quiet cells (power)"),
    Setting(5, 12, 0.00, 0.05, 0.08, 0x5EED0005, "null, small N"),
)


def condition_means(edge: float) -> np.ndarray:
    """0.40 for every condition, ``0.40 + edge`` for the true winner (index 322)."""
    means = np.full(N_CONDITIONS, BASE_MEAN)
    means[TRUE_WINNER.index] = BASE_MEAN + edge
    return means


def draw_table(stream: LcgStream, setting: Setting) -> np.ndarray:
    """One replication's nDCG@5 values, shape (N, 384), consuming N * 385 normals."""
    n = setting.n_queries
    z = stream.normals(n * (N_CONDITIONS + 1)).reshape(n, N_CONDITIONS + 1)
    per_query = setting.query_sd * z[:, 0]
    means = condition_means(setting.edge)
    return (means[np.newaxis, :] + per_query[:, np.newaxis]) + setting.cell_sd * z[:, 1:]


@dataclass(frozen=True, eq=False)
class SettingRun:
    """Per-replication records of one setting; ``adopted[r, i, j]`` is the verdict at
    ``multipliers[i]`` x ``min_deltas[j]``, ``shipping_agrees[r]`` that decide() gave the
    same verdict as the (3.0, 0.02) cell."""

    setting: Setting
    multipliers: tuple[float, ...]
    min_deltas: tuple[float, ...]
    mean_delta: np.ndarray
    paired_se: np.ndarray
    stability: np.ndarray
    refit: np.ndarray
    folds: np.ndarray
    adopted: np.ndarray
    adopted_winner: np.ndarray
    shipping_agrees: np.ndarray

    @property
    def reps(self) -> int:
        return int(self.mean_delta.shape[0])

    def cell(self, multiplier: float, min_delta: float) -> tuple[int, int]:
        """(adoptions, adoptions of the true winner) at one grid cell."""
        i, j = self.multipliers.index(multiplier), self.min_deltas.index(min_delta)
        return int(self.adopted[:, i, j].sum()), int(self.adopted_winner[:, i, j].sum())


def run_setting(
    setting: Setting,
    reps: int = AU68_REPS,
    multipliers: Sequence[float] = AU68_MULTIPLIERS,
    min_deltas: Sequence[float] = AU68_MIN_DELTAS,
) -> SettingRun:
    """Run ``reps`` replications of ``setting`` from a freshly seeded stream."""
    stream = LcgStream(setting.seed)
    n = setting.n_queries
    rows = np.arange(n)
    shape = (reps, len(multipliers), len(min_deltas))
    rec = {name: np.zeros(reps) for name in ("mean_delta", "paired_se", "stability")}
    refit = np.zeros(reps, dtype=np.intp)
    folds = np.zeros((reps, n), dtype=np.intp)
    adopted, winner = np.zeros(shape, dtype=bool), np.zeros(shape, dtype=bool)
    agrees = np.zeros(reps, dtype=bool)
    for r in range(reps):
        table = MetricTable.uniform(draw_table(stream, setting))
        loo = nested_loo(table.primary, rows)
        rec["mean_delta"][r], rec["paired_se"][r] = loo.mean_delta, loo.paired_se
        rec["stability"][r] = loo.stability
        refit[r] = loo.refit.index
        folds[r] = [c.index for c in loo.folds]
        violations = non_degradation(table, rows, loo.refit)
        for i, mult in enumerate(multipliers):
            for j, delta in enumerate(min_deltas):
                verdict = decide_from(loo, violations, mult, delta)
                adopted[r, i, j] = verdict.adopt
                winner[r, i, j] = verdict.adopt and loo.refit == TRUE_WINNER
        agrees[r] = decide(table, loo, rows) == decide_from(loo, violations)
    return SettingRun(
        setting, tuple(multipliers), tuple(min_deltas), rec["mean_delta"], rec["paired_se"],
        rec["stability"], refit, folds, adopted, winner, agrees,
    )  # fmt: skip


def run_all(
    reps: int = AU68_REPS, settings: Sequence[Setting] = SETTINGS
) -> tuple[SettingRun, ...]:
    """AU-68: every setting, ``reps`` replications each (AU-16 reads the first 300)."""
    return tuple(run_setting(s, reps) for s in settings)


def percent(count: int, reps: int) -> float:
    return 100.0 * count / reps


@dataclass(frozen=True)
class Au16Row:
    """AU-16 for one setting: reported SE over the true SD of the mean delta, and rates."""

    setting: Setting
    reps: int
    se_ratio_all: float
    se_ratio_stable: float
    n_stable: int
    mean_stability: float
    fired_pct: float
    adopt_pct_shipping: float
    adopt_pct_at_2: float
    distinct_fold_selections: int
    distinct_refits: int


def _se_ratio(se: np.ndarray, m: np.ndarray) -> float:
    sd = stats.sample_sd(m.tolist())
    return stats.mean(se.tolist()) / sd if sd > 0 else math.inf


def au16_row(run: SettingRun, reps: int = AU16_REPS) -> Au16Row:
    """The AU-16 summary of the first ``reps`` replications of ``run``."""
    m, se, stab = run.mean_delta[:reps], run.paired_se[:reps], run.stability[:reps]
    stable = stab > 0.5
    ship = (run.multipliers.index(3.0), run.min_deltas.index(0.02))
    at_2 = (run.multipliers.index(2.0), run.min_deltas.index(0.02))
    return Au16Row(
        setting=run.setting,
        reps=reps,
        se_ratio_all=_se_ratio(se, m),
        se_ratio_stable=_se_ratio(se[stable], m[stable]),
        n_stable=int(stable.sum()),
        mean_stability=stats.mean(stab.tolist()),
        fired_pct=percent(int((m > AU16_FIRE_MULTIPLIER * se).sum()), reps),
        adopt_pct_shipping=percent(int(run.adopted[:reps, ship[0], ship[1]].sum()), reps),
        adopt_pct_at_2=percent(int(run.adopted[:reps, at_2[0], at_2[1]].sum()), reps),
        distinct_fold_selections=len(np.unique(run.folds[:reps])),
        distinct_refits=len(np.unique(run.refit[:reps])),
    )


HEADLINE_MULTIPLIERS = (2.0, 3.0, 4.0)
HEADLINE_FLOOR = 0.04


@dataclass(frozen=True)
class Headline:
    """The published table: adopt % under the null (N=26: setting 2, N=12: setting 5) and
    power (setting 4) at each multiplier with the 0.02 floor, then the 0.04 floor at 2 x SE."""

    multipliers: tuple[float, ...]
    null_n26: tuple[float, ...]
    null_n12: tuple[float, ...]
    power: tuple[float, ...]
    floor_null_n26: float
    floor_power: float


def headline(runs: Sequence[SettingRun]) -> Headline:
    """The headline numbers from AU-68 runs that include settings 2, 4 and 5."""
    by_number = {run.setting.number: run for run in runs}

    def pct(number: int, multiplier: float, min_delta: float = 0.02) -> float:
        run = by_number[number]
        return percent(run.cell(multiplier, min_delta)[0], run.reps)

    mults = HEADLINE_MULTIPLIERS
    return Headline(
        multipliers=mults,
        null_n26=tuple(pct(2, m) for m in mults),
        null_n12=tuple(pct(5, m) for m in mults),
        power=tuple(pct(4, m) for m in mults),
        floor_null_n26=pct(2, 2.0, HEADLINE_FLOOR),
        floor_power=pct(4, 2.0, HEADLINE_FLOOR),
    )
