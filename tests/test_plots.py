"""groove.report.plots on synthetic inputs: every figure has a title, labelled axes and the data
it claims to draw; Japanese labels render without missing glyphs when a CJK font exists."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import warnings

import matplotlib
import numpy as np
import pytest

from groove.metrics import AggregateMetrics
from groove.report import plots
from groove.runs.corpus import CorpusSnapshot
from groove.runs.fingerprint import Fingerprint
from groove.runs.record import RunRecord
from groove.tuning.grid import DEFAULT_CONDITION, N_CONDITIONS, RRF_K_GRID, Condition
from groove.tuning.loo import LooResult, nested_loo
from groove.tuning.table import MetricTable

matplotlib.use("Agg")

WINNER = Condition(3, 1, 1, 4)


def _fingerprint(limit: int = 10) -> Fingerprint:
    return Fingerprint("m", None, limit, (1, 5), "a" * 64, 2, 3)


def _record(stamp: str, mrr: float, *, limit: int = 10, docs: int = 9) -> RunRecord:
    agg = AggregateMetrics({1: mrr - 0.1, 5: mrr + 0.1}, mrr, {5: mrr}, 4)
    corpus = CorpusSnapshot(docs, 30, str(docs) * 8)
    return RunRecord(stamp, _fingerprint(limit), corpus, (), agg, ())


def _winner_table(n: int = 12) -> MetricTable:
    """The spec's adopting fixture: base 0.20 everywhere, the winner 0.50 + 0.01 (i mod 3)."""
    values = np.full((n, N_CONDITIONS), 0.2)
    values[:, WINNER.index] = [0.5 + 0.01 * (i % 3) for i in range(n)]
    return MetricTable.uniform(values)


def _loo(table: MetricTable) -> LooResult:
    return nested_loo(table.primary, list(range(table.n_queries)))


def _labels_complete(fig) -> None:  # type: ignore[no-untyped-def]
    plot_axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    assert plot_axes
    titled = fig.get_suptitle() or all(ax.get_title() for ax in plot_axes)
    assert titled
    for ax in plot_axes:
        assert ax.get_xlabel() and ax.get_ylabel()


def _vertical_lines(ax) -> list[tuple[float, str]]:  # type: ignore[no-untyped-def]
    found = []
    for line in ax.get_lines():
        xs = line.get_xdata()
        if len(xs) == 2 and xs[0] == xs[1]:
            found.append((float(xs[0]), line.get_linestyle()))
    return found


def _horizontal_lines(ax) -> dict[str, float]:  # type: ignore[no-untyped-def]
    out = {}
    for line in ax.get_lines():
        ys = line.get_ydata()
        if len(ys) == 2 and ys[0] == ys[1]:
            out[line.get_label()] = float(ys[0])
    return out


def test_history_trend_draws_each_metric_oldest_first_with_change_markers() -> None:
    oldest = dataclasses.replace(_record("2026-01-01T00:00:00+00:00", 0.5), name="first try")
    corpus_moved = _record("2026-01-02T00:00:00+00:00", 0.6, docs=10)
    config_moved = _record("2026-01-03T00:00:00+00:00", 0.7, limit=20, docs=10)
    fig = plots.history_trend([config_moved, corpus_moved, oldest])  # newest first
    _labels_complete(fig)
    ax = fig.axes[0]
    series = {line.get_label(): list(line.get_ydata()) for line in ax.get_lines()}
    assert series["MRR"] == pytest.approx([0.5, 0.6, 0.7])
    assert series["recall@5"] == pytest.approx([0.6, 0.7, 0.8])
    assert set(series) >= {"recall@1", "recall@5", "MRR", "nDCG@5"}
    # corpus changed between runs 1 and 2 (dotted), config between runs 2 and 3 (dashed)
    assert sorted(_vertical_lines(ax)) == [(1.5, ":"), (2.5, "--")]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "corpus changed" in legend
    assert "config or golden changed (not comparable)" in legend
    # each run by its name, else its id, over its time; the dashed line says what changed
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "first try\n2026-01-01 00:00",
        f"{corpus_moved.id}\n2026-01-02 00:00",
        f"{config_moved.id}\n2026-01-03 00:00",
    ]
    assert [(t.get_position()[0], t.get_text()) for t in ax.texts] == [(2.5, "limit 10 -> 20")]
    assert plots.change_text(corpus_moved, config_moved) == "limit 10 -> 20"


def test_history_trend_without_runs_says_so() -> None:
    fig = plots.history_trend([])
    _labels_complete(fig)
    assert [t.get_text() for t in fig.axes[0].texts] == ["no stored runs yet"]


def _steps(ax) -> list[float]:  # type: ignore[no-untyped-def]
    """The sorted-delta curve's values, left to right."""
    (line,) = [line for line in ax.get_lines() if line.get_label() == plots.SORTED_LINE]
    return list(line.get_ydata())


def _names(ax) -> list[str]:  # type: ignore[no-untyped-def]
    """The labelled bars of the extremes panel, top to bottom."""
    return [t.get_text() for t in ax.get_yticklabels()][::-1]


def test_held_out_deltas_sorted_with_gate_lines_and_the_extremes_named() -> None:
    table = _winner_table()
    loo = _loo(table)
    ids = [f"q{i}" for i in range(12)]
    fig = plots.held_out_deltas(loo, ids)
    _labels_complete(fig)
    curve, named = fig.axes
    assert _steps(curve) == pytest.approx(sorted(loo.held_out_diffs, reverse=True))
    lines = _horizontal_lines(curve)
    assert lines[f"mean d = {loo.mean_delta:+.4f}"] == pytest.approx(loo.mean_delta)
    assert lines["floor 0.02 (gate 2)"] == pytest.approx(0.02)
    bound = 3.0 * loo.paired_se
    assert lines[f"3 x SE = {bound:.4f}"] == pytest.approx(bound)
    assert curve.get_xticklabels() == [] or all(
        t.get_text() not in ids for t in curve.get_xticklabels()
    )  # no query names on the crowded axis
    best = sorted(zip(loo.held_out_diffs, ids, strict=True), key=lambda p: -p[0])[:5]
    assert _names(named) == [name for _, name in best]


def test_held_out_deltas_with_one_fold_has_no_se_line() -> None:
    values = np.full((1, N_CONDITIONS), 0.3)
    loo = _loo(MetricTable.uniform(values))
    fig = plots.held_out_deltas(loo, ["only"])
    lines = _horizontal_lines(fig.axes[0])
    assert not any(label.startswith("3 x SE") for label in lines)
    assert fig.axes[0].get_legend().get_title().get_text().endswith("(fewer than 2 folds)")
    assert [t.get_text() for t in fig.axes[1].texts] == ["no held-out query changed"]


def test_selection_stability_counts_folds_and_highlights_the_refit() -> None:
    table = _winner_table()
    loo = _loo(table)
    fig = plots.selection_stability(loo)
    _labels_complete(fig)
    ax = fig.axes[0]
    assert [bar.get_width() for bar in ax.patches] == [12]
    assert ax.patches[0].get_facecolor() == matplotlib.colors.to_rgba(plots.HIGHLIGHT)
    assert [t.get_text() for t in ax.get_yticklabels()] == [WINNER.label + "  (refit)"]
    assert ax.get_title() == "Selection stability: 12 of 12 folds (1.000) picked the refit"


def test_stability_says_the_count_and_the_share() -> None:
    folds = (WINNER,) * 224 + (DEFAULT_CONDITION,)
    loo = LooResult(tuple(range(225)), WINNER, folds, (0.0,) * 225, 0.0, 0.0, 224 / 225, None)  # type: ignore[arg-type]
    assert plots.stability_text(loo) == "224 of 225 folds (0.996)"


def test_selection_stability_sums_the_rarely_picked_conditions() -> None:
    picks = [Condition.from_index(i) for i in range(40)]
    folds = tuple(picks[i % 40] for i in range(400)) + (WINNER,) * 100
    loo = LooResult(tuple(range(500)), WINNER, folds, (0.0,) * 500, 0.0, 0.0, 0.2, None)  # type: ignore[arg-type]
    fig = plots.selection_stability(loo)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(labels) == plots.MAX_BARS + 1
    assert labels[0] == f"{40 - (plots.MAX_BARS - 1)} other conditions"  # drawn bottom-up
    assert labels[-1] == WINNER.label + "  (refit)"
    assert _png_height(fig) <= 1000


def _png_height(fig) -> int:  # type: ignore[no-untyped-def]
    import io

    from PIL import Image

    return Image.open(io.BytesIO(plots.png_bytes(fig))).size[1]


def test_figures_keep_their_size_for_a_thousand_queries() -> None:
    rng = np.random.default_rng(3)
    values = rng.random((1000, N_CONDITIONS))
    table = MetricTable.uniform(values)
    ids = [f"query-{i:04d}" for i in range(1000)]
    loo = _loo(table)
    for fig in (
        plots.per_query_deltas(table, ids, WINNER),
        plots.held_out_deltas(loo, ids),
        plots.selection_stability(loo),
        plots.bm25_heatmaps(table, range(1000)),
        plots.rrf_k_sweep(table, range(1000), WINNER),
    ):
        assert _png_height(fig) <= 1000
        for ax in fig.axes:
            assert len(ax.get_yticklabels()) <= 2 * plots.LABELLED + 1 or ax.images


def test_flat_grid_says_so_and_draws_no_colour_bar() -> None:
    values = np.full((5, N_CONDITIONS), 6 / 7)
    values[:, 1::2] += 1e-15  # rounding noise, as summing in another order gives
    fig = plots.bm25_heatmaps(MetricTable.uniform(values), range(5))
    assert "no variation: every weight set gives 0.857" in fig.get_suptitle()
    assert not [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]


def test_inert_axes_are_named_in_the_heatmap_title() -> None:
    values = np.zeros((2, N_CONDITIONS))
    for c in range(N_CONDITIONS):
        values[:, c] = Condition.from_index(c).content / 10  # only content moves
    fig = plots.bm25_heatmaps(MetricTable.uniform(values), [0, 1], inert=("heading weight",))
    assert "heading weight: no effect on any query here (not measured)" in fig.get_suptitle()


def test_bm25_heatmaps_one_panel_per_context_weight_at_rrf_k_60() -> None:
    n = 3
    values = np.zeros((n, N_CONDITIONS))
    for c in range(N_CONDITIONS):
        values[:, c] = c / N_CONDITIONS  # a distinct mean for every condition
    table = MetricTable.uniform(values)
    fig = plots.bm25_heatmaps(table, [0, 1, 2])
    _labels_complete(fig)
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 4
    assert (
        fig.get_suptitle()
        == "Mean nDCG@5 over the bm25 weight grid at rrf_k = 60 (3 effective queries)"
    )
    for ctx, ax in enumerate(panels):
        grid = ax.images[0].get_array()
        for h in range(4):
            for content in range(4):
                index = Condition(h, ctx, content, 4).index
                assert grid[h, content] == pytest.approx(index / N_CONDITIONS)
    boxed = panels[DEFAULT_CONDITION.ctx].patches
    assert [(p.get_x(), p.get_y()) for p in boxed] == [(0.5, 1.5)]  # content 1, heading 2


def test_rrf_k_sweep_means_and_standard_errors() -> None:
    values = np.full((2, N_CONDITIONS), 0.4)
    values[:, WINNER.with_k(0).index] = [0.2, 0.6]  # mean 0.4, SE = sd / sqrt(2) = 0.2
    table = MetricTable.uniform(values)
    fig = plots.rrf_k_sweep(table, [0, 1], WINNER)
    _labels_complete(fig)
    ax = fig.axes[0]
    refit_line, _, (bars,) = ax.containers[0].lines
    default_line = ax.containers[1].lines[0]
    refit_x = np.asarray(refit_line.get_xdata(), dtype=float)
    default_x = np.asarray(default_line.get_xdata(), dtype=float)
    # either side of each rrf_k, so that neither series hides the other's error bars
    assert np.sqrt(refit_x * default_x) == pytest.approx(list(RRF_K_GRID))
    assert (refit_x < default_x).all()
    assert list(refit_line.get_ydata()) == pytest.approx([0.4] * 6)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == [
        "default rrf_k",
        "refit: h=4.0 ctx=1.0 content=1.0",
        "built-in default: h=2.0 ctx=1.0 content=1.0",
    ]
    spans = [tuple(segment[:, 1]) for segment in bars.get_segments()]
    assert spans[0] == pytest.approx((0.2, 0.6))  # rrf_k 5: 0.4 +- SE 0.2
    assert spans[1] == pytest.approx((0.4, 0.4))  # every other rrf_k: no spread


def test_rrf_k_sweep_legend_covers_no_bar() -> None:
    """On Cranfield the legend sat in the corner over the error bars of rrf_k 60 and 100."""
    values = np.full((4, N_CONDITIONS), 0.4)
    values[:, WINNER.with_k(5).index] = [0.0, 1.0, 0.0, 1.0]  # a bar up to the top corner
    fig = plots.rrf_k_sweep(MetricTable.uniform(values), range(4), WINNER)
    plots.png_bytes(fig)  # lays the figure out
    ax = fig.axes[0]
    assert not ax.get_legend().get_window_extent().overlaps(ax.get_window_extent())


def test_per_query_deltas_sorted_with_the_extremes_named() -> None:
    values = np.full((3, N_CONDITIONS), 0.5)
    values[:, WINNER.index] = [0.9, 0.1, 0.5]  # +0.4, -0.4, 0
    table = MetricTable.uniform(values)
    assert plots.condition_deltas(table, WINNER) == [
        (0, pytest.approx(0.4)),
        (2, 0.0),
        (1, pytest.approx(-0.4)),
    ]
    fig = plots.per_query_deltas(table, ["a", "b", "c"], WINNER)
    _labels_complete(fig)
    curve, named = fig.axes
    assert _steps(curve) == pytest.approx([0.4, 0.0, -0.4])
    assert fig.get_suptitle() == f"Per-query impact: {WINNER.label} vs the default"
    assert curve.texts[0].get_text() == "improved 1 · tied 1 · degraded 1"
    assert _names(named) == ["a", "b"]  # the tie is not named
    assert [bar.get_width() for bar in named.patches] == pytest.approx([-0.4, 0.4])


def test_extremes_lists_each_side_once() -> None:
    pairs = [(f"q{i}", d) for i, d in enumerate([0.3, 0.2, 0.0, -0.1, 0.0, 0.1])]
    assert plots.extremes(pairs, 2) == [("q0", 0.3), ("q1", 0.2), ("q3", -0.1)]
    assert plots.extremes([("x", 0.5)], 5) == [("x", 0.5)]


def test_history_trend_names_at_most_a_dozen_runs() -> None:
    runs = [_record(f"2026-01-{d:02d}T00:00:00+00:00", 0.5) for d in range(28, 0, -1)]
    fig = plots.history_trend(runs)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert len(labels) <= plots.MAX_TIME_LABELS
    assert labels[-1] == f"{runs[0].id}\n2026-01-28 00:00"  # the newest run is always named


def test_png_bytes_is_a_png() -> None:
    assert plots.png_bytes(plots.history_trend([]))[:8] == b"\x89PNG\r\n\x1a\n"


def test_japanese_labels_have_every_glyph() -> None:
    if plots.configure_fonts() is None:
        pytest.skip("no CJK font installed (Debian: apt-get install fonts-ipafont-gothic)")
    values = np.full((2, N_CONDITIONS), 0.5)
    table = MetricTable.uniform(values)
    ids = ["バックアップの保持期間", "ロールバック条件"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" is a UserWarning
        plots.png_bytes(plots.per_query_deltas(table, ids, WINNER))
        plots.png_bytes(plots.held_out_deltas(_loo(table), ids))


def test_importing_plots_does_not_import_matplotlib() -> None:
    code = "import sys, groove.report.plots; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
