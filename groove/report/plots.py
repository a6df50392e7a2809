"""Matplotlib figures for the notebooks: the eval history trend and the tune explorer's plots.

Every function returns a new ``matplotlib.figure.Figure`` with a title, labelled axes and
units. Figures are built without pyplot, so a notebook shows each one exactly once (as the
cell's value) and nothing depends on the interactive backend; rendering uses Agg.
matplotlib is imported inside the functions: ``groove --help`` must not pay for it.

Scores (recall, MRR, nDCG) are fractions in 0..1; a delta is a difference of two of them.

Japanese text (queries, headings) needs a CJK font: ``configure_fonts`` puts the first
installed family of ``CJK_FONTS`` after DejaVu Sans in matplotlib's per-glyph fallback list.
Without one, Japanese is drawn as boxes; on Debian ``apt-get install fonts-ipafont-gothic``.
"""

from __future__ import annotations

import functools
import io
import math
import threading
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from groove.cards import clip
from groove.history.change import SAME_TOLERANCE, direction
from groove.runs.described import label as run_label
from groove.runs.described import record_changes
from groove.runs.record import RunRecord
from groove.stats.significance import Significance, format_p, p_text
from groove.stats.slices import Slice
from groove.tuning.columns import Column
from groove.tuning.gates import ADOPT_MIN_MEAN_DELTA, ADOPT_SE_MULTIPLIER, STABILITY_MIN
from groove.tuning.grid import (
    BM25_WEIGHT_GRID,
    DEFAULT_CONDITION,
    DEFAULT_K_INDEX,
    PRIMARY_K,
    RRF_K_GRID,
    Condition,
)
from groove.tuning.loo import LooResult
from groove.tuning.select import condition_means
from groove.tuning.stats import sample_sd
from groove.tuning.table import MetricTable

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.image import AxesImage


#: What the leave-one-query-out plots read: either grid's (groove.tuning.loo).
Loo = LooResult[Any]


BASE_FONT = "DejaVu Sans"
CJK_FONTS = (
    "IPAGothic",
    "IPAPGothic",
    "IPAexGothic",
    "Noto Sans CJK JP",
    "Noto Sans JP",
    "Source Han Sans JP",
    "TakaoGothic",
    "VL Gothic",
    "Hiragino Sans",
    "Yu Gothic",
    "MS Gothic",
)
UP, DOWN, FLAT = "#2e7d32", "#c62828", "#9e9e9e"
HIGHLIGHT = "#1565c0"
FLAT_SPREAD = 1e-9  # a grid whose means differ by less than this has no variation to colour
MAX_TIME_LABELS = 12


@functools.cache
def configure_fonts() -> str | None:
    """Make DejaVu Sans fall back to an installed CJK font; return that family, or None.

    matplotlib's font cache may predate a font installed later, so system fonts it has not
    seen are registered before giving up. Sets ``rcParams["font.family"]`` (process-wide).
    """
    import matplotlib
    from matplotlib import font_manager

    found = _first_cjk(font_manager)
    if found is None:
        known = {f.fname for f in font_manager.fontManager.ttflist}
        for path in font_manager.findSystemFonts():
            if path not in known:
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    continue  # a font file FreeType cannot read is simply not a candidate
        found = _first_cjk(font_manager)
    matplotlib.rcParams["font.family"] = [BASE_FONT, found] if found else [BASE_FONT]
    return found


def preload() -> None:
    """Import matplotlib's figure and Agg modules in a background thread.

    A report calls this before its slow measurement (model load, searches), which mostly
    waits on native code, so the ~1 s import is ready when the first figure is drawn.
    """
    threading.Thread(target=_import_matplotlib, name="groove-preload-plots", daemon=True).start()


def _import_matplotlib() -> None:
    import matplotlib.backends.backend_agg
    import matplotlib.figure  # noqa: F401


def _first_cjk(font_manager: object) -> str | None:
    names = {f.name for f in font_manager.fontManager.ttflist}  # type: ignore[attr-defined]
    return next((name for name in CJK_FONTS if name in names), None)


def _figure(
    width: float, height: float, *, layout: Literal["constrained"] | None = "constrained"
) -> Figure:
    configure_fonts()
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout=layout)


def _distribution_axes(fig: Figure) -> tuple[Axes, Axes]:
    """The sorted-curve panel and the named-extremes panel at fixed places (10 x 4.4 in,
    narrower than a JupyterLab output area): no layout engine, which would double the
    drawing time the condition picker waits on; labels of 22 columns fit on the right."""
    curve = fig.add_axes((0.075, 0.13, 0.50, 0.74))
    named = fig.add_axes((0.64, 0.13, 0.16, 0.74))
    named.yaxis.tick_right()  # the names take the right margin, away from the curve
    return curve, named


def _distribution_figure(
    title: str, count: int, noun: str, ylabel: str
) -> tuple[Figure, Axes, Axes]:
    """A sorted distribution of ``count`` ``noun`` (folds, queries) and its named extremes."""
    fig = _figure(10, 4.4, layout=None)
    ax, named = _distribution_axes(fig)
    fig.suptitle(title)
    ax.set_title(f"all {count} {noun}, sorted", fontsize="medium")
    ax.set_xlabel(f"{noun}, from most improved to most degraded (count)")
    ax.set_ylabel(ylabel)
    return fig, ax, named


def png_bytes(fig: Figure, dpi: int = 100) -> bytes:
    """The figure as PNG bytes (Agg), as a notebook or a test shows it."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def _empty(ax: Axes, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes)


# ---------------------------------------------------------------- eval


def _metric_labels(runs: Sequence[RunRecord]) -> list[str]:
    recall = sorted({k for r in runs for k in r.aggregate.recall_at_k})
    ndcg = sorted({k for r in runs for k in r.aggregate.ndcg_at_k})
    return [f"recall@{k}" for k in recall] + ["MRR"] + [f"nDCG@{k}" for k in ndcg]


def _metric_value(run: RunRecord, label: str) -> float:
    agg = run.aggregate
    if label == "MRR":
        return agg.mrr
    name, k = label.split("@")
    values = agg.recall_at_k if name == "recall" else agg.ndcg_at_k
    return values.get(int(k), math.nan)


def history_trend(runs: Sequence[RunRecord]) -> Figure:
    """Every aggregate metric across the stored runs (given newest first, as the history
    holds them; drawn oldest to newest), each run named by its name else its id, with a
    dashed line where the fingerprint changed (runs on either side are not comparable),
    labelled with the settings that changed in the CLI's words (``lexical auto ->
    trigram``), and a dotted one where the corpus changed."""
    fig = _figure(10, 4.5)
    ax = fig.add_subplot()
    ax.set_title("Eval history: aggregate metrics across the stored runs")
    ax.set_xlabel("eval run, oldest to newest (name, else id; UTC time)")
    ax.set_ylabel("score (0–1, higher is better)")
    ordered = list(reversed(runs))
    if not ordered:
        _empty(ax, "no stored runs yet")
        return fig
    x = np.arange(1, len(ordered) + 1)
    for label in _metric_labels(ordered):
        ax.plot(x, [_metric_value(r, label) for r in ordered], marker="o", label=label)
    _change_markers(ax, ordered)
    step = math.ceil(len(ordered) / MAX_TIME_LABELS)  # every run drawn, a readable few named
    named = x[::-1][::step][::-1]  # the newest run is always named
    ax.set_xticks(named, [_run_tick(ordered[i - 1]) for i in named])
    ax.tick_params(axis="x", labelrotation=30)
    ax.set_xlim(0.5, len(ordered) + 0.5)
    ax.set_ylim(-0.02, 1.05)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small")
    return fig


def _run_tick(record: RunRecord) -> str:
    return f"{clip(run_label(record), 24)}\n{record.timestamp[:16].replace('T', ' ')}"


def change_text(before: RunRecord, now: RunRecord) -> str:
    """What a dashed line says: the settings that changed, as the history's ``changed``
    column words them, else that the golden file or the metric version did."""
    return "; ".join(record_changes(before, now)) or "golden file or metric version changed"


def _change_markers(ax: Axes, ordered: Sequence[RunRecord]) -> None:
    config_label = "config or golden changed (not comparable)"
    corpus_label = "corpus changed"
    for i in range(1, len(ordered)):
        before, now = ordered[i - 1], ordered[i]
        edge = i + 0.5  # between run i and run i + 1 (1-based x)
        if not now.fingerprint.compatible_with(before.fingerprint):
            ax.axvline(edge, color=DOWN, linestyle="--", label=config_label)
            config_label = "_"  # one legend entry per kind of marker
            ax.text(
                edge,
                1.03,
                clip(change_text(before, now), 60),
                rotation=90,
                ha="right",
                va="top",
                fontsize="x-small",
                color=DOWN,
            )
        if now.corpus is not None and before.corpus is not None and now.corpus != before.corpus:
            ax.axvline(edge, color=FLAT, linestyle=":", linewidth=2, label=corpus_label)
            corpus_label = "_"


def significance_intervals(
    significance: Significance,
    *,
    threshold: float,
    adjusted: Mapping[str, float] | None = None,
    title: str = "Change since the previous run: mean delta with its 95% interval",
) -> Figure:
    """One row per metric of the diff: the mean per-query delta (dot) and its 95% paired
    bootstrap interval (bar), red when the interval lies below zero, green above, grey
    across it; the label carries the two-sided sign-flip p (and, when given, the gate's
    adjusted one-sided p of a drop).
    Dashed lines mark the regression threshold on either side of zero."""
    rows = [(label, t) for label, t in significance.tests.items() if t is not None]
    fig = _figure(9, 1.6 + 0.45 * max(len(rows), 1))
    ax = fig.add_subplot()
    ax.set_title(title)
    ax.set_xlabel(f"delta over {significance.paired_queries} paired queries (now − previous)")
    if not rows:
        _empty(ax, "no paired queries")
        return fig
    rows.reverse()  # barh-style: the first metric on top
    y = np.arange(len(rows))
    for i, (_, t) in enumerate(rows):
        colour = DOWN if t.ci_high < 0 else UP if t.ci_low > 0 else FLAT
        ax.plot([t.ci_low, t.ci_high], [i, i], color=colour, linewidth=6, solid_capstyle="butt")
        ax.plot([t.delta], [i], marker="o", color="black")
    labels = []
    for label, t in rows:
        text = f"{label}  {p_text(t.p_value)}"
        if adjusted is not None and label in adjusted:
            text += f" (drop: adjusted {format_p(adjusted[label])})"
        labels.append(text)
    ax.set_yticks(y, labels)
    ax.axvline(0.0, color="black", linewidth=0.8)
    for edge in (-threshold, threshold):
        ax.axvline(edge, color=FLAT, linestyle="--", linewidth=1)
    reach = max(threshold * 1.5, *(max(abs(t.ci_low), abs(t.ci_high)) for _, t in rows)) * 1.1
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    return fig


def slice_intervals(slices: Sequence[Slice], label: str, *, threshold: float) -> Figure:
    """One row per slice (groove.stats.slices): with a comparison, the change of ``label``
    on its queries (dot) and its 95% paired interval (bar, coloured as in
    ``significance_intervals``), labelled with its query count and p(drop); without one,
    the slice's value of ``label`` as a bar. Dashed lines mark the regression threshold."""
    rows = list(reversed(slices))  # the first slice on top
    fig = _figure(9, 1.6 + 0.42 * max(len(rows), 1))
    ax = fig.add_subplot()
    if not rows:
        _empty(ax, "no slices: the golden file has no tags")
        return fig
    tests = [s.delta(label) for s in rows]
    y = np.arange(len(rows))
    names = [f"{_short(s.name)} ({s.query_count})" for s in rows]
    if all(d is None for d in tests):
        values = [s.value(label) for s in rows]
        ax.barh(y, values, color=FLAT)
        ax.set_title(f"{label} per slice (queries in brackets)")
        ax.set_xlabel(label)
        ax.set_xlim(0.0, 1.0)
        ax.set_yticks(y, names)
        return fig
    ax.set_title(f"Change of {label} per slice: mean delta with its 95% interval")
    ax.set_xlabel("delta over the slice's paired queries (now − previous)")
    reach = threshold * 1.5
    labels = []
    for i, (name, d) in enumerate(zip(names, tests, strict=True)):
        test = d.test if d is not None else None
        if test is None:
            labels.append(f"{name}  (not compared)")
            continue
        colour = DOWN if test.ci_high < 0 else UP if test.ci_low > 0 else FLAT
        ax.plot(
            [test.ci_low, test.ci_high], [i, i], color=colour, linewidth=6, solid_capstyle="butt"
        )
        ax.plot([test.delta], [i], marker="o", color="black")
        labels.append(f"{name}  p(drop) {format_p(test.p_drop)}")
        reach = max(reach, abs(test.ci_low), abs(test.ci_high))
    ax.set_yticks(y, labels)
    ax.axvline(0.0, color="black", linewidth=0.8)
    for edge in (-threshold, threshold):
        ax.axvline(edge, color=FLAT, linestyle="--", linewidth=1)
    ax.set_xlim(-reach * 1.1, reach * 1.1)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    return fig


# ---------------------------------------------------------------- tune


def _shade(delta: float) -> str:
    return {1: UP, -1: DOWN}.get(direction(delta), FLAT)


LABELLED = 5  # queries named in a distribution figure: the N most improved and most degraded
MAX_BARS = 12  # conditions drawn one bar each in the stability figure; the rest are summed
MAX_LABEL_CHARS = 22
SORTED_LINE = "_sorted deltas"  # the curve's line (underscore: not in the legend)


def _short(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    """``text`` cut to ``limit`` columns (a CJK character takes two), with an ellipsis."""
    width = 0
    for position, char in enumerate(text):
        width += 2 if unicodedata.east_asian_width(char) in "WF" else 1
        if width > limit:
            return text[: max(position - 1, 1)] + "…"
    return text


def _sorted_curve(ax: Axes, deltas: Sequence[float]) -> None:
    """Every delta as one step, sorted from most improved (left) to most degraded (right):
    a figure of fixed size whatever the number of queries, the ties the flat middle."""
    ordered = np.sort(np.asarray(deltas, dtype=np.float64))[::-1]
    x = np.arange(1, len(ordered) + 1)
    gains = np.where(ordered >= SAME_TOLERANCE, ordered, 0.0)  # as direction() counts
    losses = np.where(ordered <= -SAME_TOLERANCE, ordered, 0.0)
    # Filled areas and one line: vectorised limits, unlike a step patch per query.
    ax.fill_between(x, gains, step="mid", color=UP, linewidth=0)
    ax.fill_between(x, losses, step="mid", color=DOWN, linewidth=0)
    ax.plot(x, ordered, drawstyle="steps-mid", color="black", linewidth=0.6, label=SORTED_LINE)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xlim(0.5, len(ordered) + 0.5)
    improved = int((gains != 0).sum())
    degraded = int((losses != 0).sum())
    ax.text(
        0.01,
        0.01,
        f"improved {improved} · tied {len(ordered) - improved - degraded} · degraded {degraded}",
        transform=ax.transAxes,
        fontsize="small",
    )


def extremes(labelled: Sequence[tuple[str, float]], n: int = LABELLED) -> list[tuple[str, float]]:
    """The ``n`` most improved and ``n`` most degraded (label, delta) pairs, best first;
    ties (delta 0) are never listed."""
    ordered = sorted(labelled, key=lambda pair: -pair[1])
    best = [p for p in ordered[:n] if direction(p[1]) > 0]
    worst = [p for p in ordered[-n:] if direction(p[1]) < 0] if n else []
    return best + [p for p in worst if p not in best]


def _extremes_panel(
    ax: Axes, labelled: Sequence[tuple[str, float]], n: int, what: str, one: str
) -> None:
    """The ``n`` most improved and ``n`` most degraded items as labelled bars (top: best)."""
    ax.set_title(f"{n} most improved, {n} most degraded", fontsize="medium")
    ax.set_xlabel(f"ΔnDCG@{PRIMARY_K} (0–1 scale)")
    ax.set_ylabel(what)
    chosen = extremes(labelled, n)
    if not chosen:
        ax.set_yticks([])
        _empty(ax, f"no {one} changed")
        return
    chosen.reverse()  # barh draws bottom-up: the most improved ends on top
    y = np.arange(len(chosen))
    values = [d for _, d in chosen]
    ax.barh(y, values, color=[_shade(d) for d in values])
    ax.set_yticks(y, [_short(label) for label, _ in chosen])
    ax.axvline(0.0, color="black", linewidth=0.8)
    reach = max(0.05, max(abs(d) for d in values) * 1.15)
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-0.6, max(len(chosen), 2 * n) - 0.4)  # same bar height whatever the count


def held_out_deltas(
    loo: Loo,
    query_ids: Sequence[str],
    *,
    floor: float = ADOPT_MIN_MEAN_DELTA,
    multiplier: float = ADOPT_SE_MULTIPLIER,
    labelled: int = LABELLED,
) -> Figure:
    """Every LOO fold's d_j = nDCG@5(fold's pick, q_j) - nDCG@5(default, q_j), sorted (left
    panel, with the mean, the ``floor`` of gate 2 and ``multiplier`` x paired SE of gate 3
    as lines), and the ``labelled`` most improved and most degraded held-out queries by name
    (right). ``query_ids[row]`` names the table row each fold held out."""
    fig, ax, named = _distribution_figure(
        f"Held-out ΔnDCG@{PRIMARY_K} per leave-one-query-out fold",
        len(loo.folds),
        "folds",
        f"ΔnDCG@{PRIMARY_K}: fold's pick − default (0–1 scale)",
    )
    diffs = list(loo.held_out_diffs)
    if not diffs:
        _empty(ax, "no folds: no query is effective")
        _extremes_panel(named, [], labelled, "held-out queries", "held-out query")
        return fig
    _sorted_curve(ax, diffs)
    ax.axhline(loo.mean_delta, color=HIGHLIGHT, label=f"mean d = {loo.mean_delta:+.4f}")
    ax.axhline(floor, color="black", linestyle="--", label=f"floor {floor:.2f} (gate 2)")
    if math.isfinite(loo.paired_se):
        bound = multiplier * loo.paired_se
        ax.axhline(bound, color=DOWN, linestyle=":", label=f"{multiplier:.0f} x SE = {bound:.4f}")
        se_text = f"paired SE {loo.paired_se:.4f}"
    else:
        se_text = "paired SE undefined (fewer than 2 folds)"
    ax.legend(title=se_text, fontsize="small", loc="upper right")
    names = [(query_ids[row], d) for row, d in zip(loo.rows, diffs, strict=True)]
    _extremes_panel(named, names, labelled, "held-out queries", "held-out query")
    return fig


def stability_text(loo: Loo) -> str:
    """ "224 of 225 folds (0.996)": the count and the share, never a rounded 1.00 alone."""
    folds = len(loo.folds)
    agree = sum(1 for c in loo.folds if c == loo.refit)
    return f"{agree} of {folds} folds ({loo.stability:.3f})"


def selection_stability(loo: Loo, *, shown: int = MAX_BARS) -> Figure:
    """How many folds selected each condition, most chosen first (at most ``shown`` bars,
    the rest summed into one); the refit's bar is highlighted, and the line marks the
    majority the stability gate needs (more than half of the folds)."""
    folds = len(loo.folds)
    counts = sorted(Counter(loo.folds).items(), key=lambda item: (-item[1], item[0].index))
    bars: list[tuple[str, int, str]] = []
    for c, n in counts[:shown]:
        refit = c == loo.refit
        bars.append((c.label + ("  (refit)" if refit else ""), n, HIGHLIGHT if refit else FLAT))
    rest = counts[shown:]
    if rest:
        bars.append((f"{len(rest)} other conditions", sum(n for _, n in rest), FLAT))
    fig = _figure(9, 1.6 + 0.4 * max(len(bars), 1))
    ax = fig.add_subplot()
    ax.set_title(f"Selection stability: {stability_text(loo)} picked the refit")
    ax.set_xlabel(f"folds that selected the condition (count, of {folds})")
    ax.set_ylabel("grid condition")
    if not folds:
        _empty(ax, "no folds: no query is effective")
        return fig
    bars.reverse()  # barh draws bottom-up: the most chosen ends on top
    y = np.arange(len(bars))
    ax.barh(y, [n for _, n, _ in bars], color=[colour for _, _, colour in bars])
    ax.set_yticks(y, [label for label, _, _ in bars])
    for position, (_, n, _) in zip(y, bars, strict=True):
        ax.text(n, float(position), f" {n}", va="center", fontsize="small")
    ax.axvline(STABILITY_MIN * folds, color=DOWN, linestyle="--", label="gate: more than half")
    ax.set_xlim(0, folds * 1.08 + 0.5)
    ax.legend(fontsize="small", loc="lower right")
    return fig


def bm25_heatmaps(table: MetricTable, rows: Sequence[int], *, inert: Sequence[str] = ()) -> Figure:
    """Mean nDCG@5 over ``rows`` for the 64 bm25 weight sets at rrf_k 60: one panel per
    context weight, heading weight down, content weight across; the default is boxed.
    A grid with no variation says so instead of colouring rounding noise; ``inert`` names
    the axes the data cannot move (groove.tuning.axes), said in the title."""
    means = condition_means(table.primary, rows)
    n = len(BM25_WEIGHT_GRID)
    grids = [
        np.array(
            [
                [means[Condition(h, ctx, c, DEFAULT_K_INDEX).index] for c in range(n)]
                for h in range(n)
            ]
        )
        for ctx in range(n)
    ]
    low = min(float(g.min()) for g in grids)
    high = max(float(g.max()) for g in grids)
    flat = high - low <= FLAT_SPREAD
    fig = _figure(14, 4.2)
    title = (
        f"Mean nDCG@{PRIMARY_K} over the bm25 weight grid at rrf_k = "
        f"{RRF_K_GRID[DEFAULT_K_INDEX]:.0f} ({len(rows)} effective queries)"
    )
    if flat:  # a colour scale over rounding noise would invent differences
        title += f"\nno variation: every weight set gives {high:.3f}"
    elif inert:
        title += f"\n{' and '.join(inert)}: no effect on any query here (not measured)"
    fig.suptitle(title)
    axes = fig.subplots(1, n)
    image: AxesImage | None = None
    for ctx, (ax, grid) in enumerate(zip(axes, grids, strict=True)):
        if flat:
            image = None
            ax.imshow(np.zeros_like(grid), cmap="Greys", vmin=0.0, vmax=4.0)
        else:
            image = ax.imshow(grid, cmap="viridis", vmin=low, vmax=high)
        ax.set_title(f"context weight {BM25_WEIGHT_GRID[ctx]:g}")
        ax.set_xlabel("bm25 content weight")
        ax.set_ylabel("bm25 heading weight")
        ticks = [f"{w:g}" for w in BM25_WEIGHT_GRID]
        ax.set_xticks(range(n), ticks)
        ax.set_yticks(range(n), ticks)
        middle = (low + high) / 2
        for h in range(n):
            for c in range(n):
                ink = "black" if flat or grid[h, c] > middle else "white"  # readable on viridis
                ax.text(c, h, f"{grid[h, c]:.3f}", ha="center", va="center", fontsize=7, color=ink)
        if ctx == DEFAULT_CONDITION.ctx:
            _box(ax, DEFAULT_CONDITION.content, DEFAULT_CONDITION.h)
    if image is not None:
        fig.colorbar(
            image, ax=axes, label=f"mean nDCG@{PRIMARY_K} (0–1)", shrink=0.9, format="%.3f"
        )
    return fig


def _box(ax: Axes, col: int, row: int) -> None:
    from matplotlib.patches import Rectangle

    ax.add_patch(
        Rectangle(
            (col - 0.5, row - 0.5),
            1,
            1,
            fill=False,
            edgecolor="red",
            linewidth=2,
            label="built-in default",
        )
    )


def _mean_and_se(values: np.ndarray) -> tuple[float, float]:
    xs = values.tolist()
    if not xs:
        return math.nan, math.nan
    mean = sum(xs) / len(xs)
    return mean, sample_sd(xs) / math.sqrt(len(xs)) if len(xs) > 1 else 0.0


RRF_K_DODGE = 10**0.02  # the two series drawn either side of each rrf_k (log axis)


def rrf_k_sweep(
    table: MetricTable, rows: Sequence[int], condition: Condition, *, role: str = "refit"
) -> Figure:
    """Mean nDCG@5 over ``rows`` at each rrf_k, for ``condition``'s bm25 weights (named
    ``role`` in the legend) and for the default weights; error bars are the SE of the mean
    over queries (SD / sqrt(N)). The two series sit either side of each rrf_k so that
    neither hides the other's bars; the legend is outside the axes, over no bar."""
    fig = _figure(10, 4.5)
    ax = fig.add_subplot()
    ax.set_title(f"rrf_k sweep: mean nDCG@{PRIMARY_K} ± SE over {len(rows)} effective queries")
    ax.set_xlabel("rrf_k (RRF constant k, log scale)")
    ax.set_ylabel(f"mean nDCG@{PRIMARY_K} (0–1)")
    idx = np.asarray(rows, dtype=np.intp)
    series = [(condition, HIGHLIGHT, role, 1.0)]
    if condition.with_k(0) != DEFAULT_CONDITION.with_k(0):
        series = [
            (condition, HIGHLIGHT, role, 1 / RRF_K_DODGE),
            (DEFAULT_CONDITION, FLAT, "built-in default", RRF_K_DODGE),
        ]
    for weights, colour, name, dodge in series:
        points = [
            _mean_and_se(table.primary[idx, weights.with_k(k).index])
            for k in range(len(RRF_K_GRID))
        ]
        ax.errorbar(
            [k * dodge for k in RRF_K_GRID],
            [m for m, _ in points],
            yerr=[se for _, se in points],
            marker="o",
            capsize=4,
            color=colour,
            label=f"{name}: {weights.label.rsplit(' k=', 1)[0]}",
        )
    ax.set_xscale("log")
    ax.set_xticks(RRF_K_GRID, [f"{k:g}" for k in RRF_K_GRID])
    ax.minorticks_off()
    ax.axvline(RRF_K_GRID[DEFAULT_K_INDEX], color="black", linestyle=":", label="default rrf_k")
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig


def condition_deltas(
    table: MetricTable,
    condition: Column,
    rows: Sequence[int] | None = None,
    *,
    default: int = DEFAULT_CONDITION.index,
) -> list[tuple[int, float]]:
    """(row, nDCG@5(condition) - nDCG@5(default)) for ``rows`` (default: all), best first;
    ``default`` is the baseline's column (an engine's family grid: 0)."""
    chosen = range(table.n_queries) if rows is None else rows
    primary = table.primary
    pairs = [(r, float(primary[r, condition.index] - primary[r, default])) for r in chosen]
    return sorted(pairs, key=lambda pair: (-pair[1], pair[0]))


def per_query_deltas(
    table: MetricTable,
    query_ids: Sequence[str],
    condition: Column,
    rows: Sequence[int] | None = None,
    *,
    labelled: int = LABELLED,
    default: int = DEFAULT_CONDITION.index,
    baseline: str = "the default",
) -> Figure:
    """ΔnDCG@5 of ``condition`` against the built-in default for every query, as a sorted
    distribution (left: most improved to most degraded, the ties flat in the middle), and
    the ``labelled`` most improved and most degraded queries by name (right): read them
    before adopting a better mean. Same size for 10 queries or 10,000. ``default`` and
    ``baseline`` name another baseline column (an engine's family grid)."""
    pairs = condition_deltas(table, condition, rows, default=default)
    fig, ax, named = _distribution_figure(
        f"Per-query impact: {condition.label} vs {baseline}",
        len(pairs),
        "queries",
        f"ΔnDCG@{PRIMARY_K} (condition − default, 0–1 scale)",
    )
    if not pairs:
        _empty(ax, "no usable golden query")
        _extremes_panel(named, [], labelled, "queries", "query")
        return fig
    deltas = [d for _, d in pairs]
    _sorted_curve(ax, deltas)
    reach = max(0.05, max(abs(d) for d in deltas) * 1.1)
    ax.set_ylim(-reach, reach)
    _extremes_panel(named, [(query_ids[r], d) for r, d in pairs], labelled, "queries", "query")
    return fig
