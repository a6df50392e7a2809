"""The tune explorer's condition picker: one widget over the 384 grid conditions.

Sort (mean ΔnDCG@5, fold picks, degraded queries, grid order) and filter (text such as
"k=60" or "h=4.0", or only the conditions a fold picked) the rows of
groove.tuning.frames.conditions_frame; choosing one redraws its per-query ΔnDCG@5 against
the default from the metric table in memory. Under the headless runner, where nobody can
draw or use a widget, the cell shows a one-line hint instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groove.install import install_command
from groove.report import plots
from groove.report.notebook.headless import headless
from groove.report.notebook.html_parts import MUTED, box, escape, html_output, image
from groove.tuning import frames
from groove.tuning.grid import Condition, all_conditions

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from groove.tuning.result import Analysis, TuneResult


def condition_rows(result: TuneResult) -> list[dict[str, Any]]:
    """The rows of the library's conditions frame as the table and the picker show them,
    best mean ΔnDCG@5 against the default first: the condition, its four settings, the
    mean delta over the effective queries, how many of them it improved and degraded, how
    many LOO folds picked it, and whether it is the refit or the default."""
    frame = frames.conditions_frame(result)
    gain = frames.PRIMARY
    conditions = all_conditions()
    rows = []
    for index, mean, improved, degraded, folds, refit, default in zip(
        frame["condition"], frame[f"{gain}_delta"], frame[f"{gain}_improved"],
        frame[f"{gain}_degraded"], frame["folds"], frame["refit"], frame["default"],
        strict=True,
    ):  # fmt: skip
        c = conditions[index]
        marks = [m for m, hit in (("refit", refit), ("default", default)) if hit]
        rows.append(
            {
                "condition": c.label,
                "rrf_k": c.rrf_k,
                "heading": c.heading_weight,
                "context": c.context_weight,
                "content": c.content_weight,
                "mean ΔnDCG@5": float(mean),
                "improved": int(improved),
                "degraded": int(degraded),
                "fold picks": int(folds),
                "mark": ", ".join(marks),
                "index": int(index),
            }
        )
    return sorted(rows, key=lambda row: (-row["mean ΔnDCG@5"], -row["fold picks"], row["index"]))


PICKER_HINT = (
    "Condition picker: needs a live kernel and the widget front end where the Jupyter "
    f"server runs ({install_command('lab')}); the table above lists every condition."
)
SORTS = {
    "mean Δ, best first": lambda row: (-row["mean ΔnDCG@5"], row["index"]),
    "mean Δ, worst first": lambda row: (row["mean ΔnDCG@5"], row["index"]),
    "fold picks, most first": lambda row: (-row["fold picks"], -row["mean ΔnDCG@5"], row["index"]),
    "most degraded queries first": lambda row: (-row["degraded"], row["index"]),
    "grid order": lambda row: row["index"],
}


def _token_match(word: str, row: dict[str, Any]) -> bool:
    """``k=10`` matches k=10 but not k=100, ``h=4`` matches h=4.0, ``refit`` the refit."""
    tokens = f"{row['condition']} {row['mark'].replace(',', ' ')}".lower().split()
    return any(t == word or t.startswith(word + ".") for t in tokens)


def _picker_box(children: list[Any]) -> Any:
    """A VBox whose plain-text form (what a front end without the widget extension shows
    instead of the widget, and the HTML export) is a one-line hint, not its repr."""
    import ipywidgets as widgets

    class PickerBox(widgets.VBox):
        def _repr_mimebundle_(self, **kwargs: Any) -> Any:
            bundle = super()._repr_mimebundle_(**kwargs)
            if isinstance(bundle, tuple):
                bundle = bundle[0]
            if isinstance(bundle, dict):
                bundle["text/plain"] = PICKER_HINT
            return bundle

        def __repr__(self) -> str:
            return PICKER_HINT

    return PickerBox(children)


class ConditionPicker:
    """The 384 grid conditions, sortable (mean ΔnDCG@5, fold picks, degraded queries, grid
    order) and filterable (text such as "k=60" or "h=4.0", or only those a fold picked);
    choosing one redraws its per-query ΔnDCG@5 against the default at once, from the metric
    table already in memory (no search). The plot has the same bounded size as the others."""

    def __init__(self, result: TuneResult, analysis: Analysis) -> None:
        import ipywidgets as widgets

        self._table = analysis.table
        self._ids = [q.id for q in result.queries]
        self._rows = result.effective_rows or None
        self.rows = condition_rows(result)
        refit = analysis.loo.refit
        self.sort = widgets.Dropdown(options=list(SORTS), description="sort by")
        self.filter = widgets.Text(  # applied on Enter: no redraw per keystroke
            description="filter",
            placeholder="e.g. k=60 h=4 (Enter)",
            continuous_update=False,
        )
        self.picked_only = widgets.Checkbox(description="only conditions a fold picked")
        self.dropdown = widgets.Dropdown(description="condition")
        for control, width in ((self.sort, "280px"), (self.filter, "340px")):
            control.layout.width = width
        self.dropdown.layout.width = "720px"
        self.output = widgets.Output()
        self.figure: Figure | None = None
        self.drawn: int | None = None
        self.shown: list[int] = []
        self._updating = False
        self._refresh_options(keep=refit.index)
        self.dropdown.observe(self._on_pick, names="value")
        for control in (self.sort, self.filter, self.picked_only):
            control.observe(lambda _change: self._refresh_options(), names="value")
        controls = widgets.HBox([self.sort, self.filter, self.picked_only])
        self.widget = _picker_box([controls, self.dropdown, self.output])
        self.draw(refit.index)

    @staticmethod
    def option_label(row: dict[str, Any]) -> str:
        mark = f" ({row['mark']})" if row["mark"] else ""
        return (
            f"{row['condition']}{mark} · mean Δ {row['mean ΔnDCG@5']:+.4f} · "
            f"↑{row['improved']} ↓{row['degraded']} · {row['fold picks']} fold picks"
        )

    def matching(self) -> list[dict[str, Any]]:
        """The rows the sort and filter controls select, in their order."""
        words = self.filter.value.lower().split()
        rows = [
            row
            for row in self.rows
            if all(_token_match(w, row) for w in words)
            and (row["fold picks"] > 0 or not self.picked_only.value)
        ]
        return sorted(rows, key=SORTS[self.sort.value])

    def _refresh_options(self, keep: int | None = None) -> None:
        """Re-list the conditions the controls select; keep the chosen one if it is still
        listed, else choose the first listed (and redraw)."""
        current = self.dropdown.value if keep is None else keep
        rows = self.matching()
        self.shown = [row["index"] for row in rows]
        chosen = current if current in self.shown else (self.shown[0] if self.shown else None)
        self._updating = True
        try:  # a new options list resets the value: set it back without drawing twice
            self.dropdown.options = [(self.option_label(row), row["index"]) for row in rows]
            self.dropdown.value = chosen
        finally:
            self._updating = False
        if chosen is not None and chosen != self.drawn and self.figure is not None:
            self.draw(chosen)

    def _on_pick(self, change: dict[str, Any]) -> None:
        if change["new"] is not None and not self._updating:
            self.draw(change["new"])

    def draw(self, index: int) -> None:
        from IPython.display import display

        self.figure = plots.per_query_deltas(
            self._table, self._ids, Condition.from_index(index), self._rows
        )
        picture = image(self.figure)
        self.drawn = index
        self.output.clear_output(wait=True)
        with self.output:
            display(picture)


HEADLESS_PICKER_HINT = (
    "Condition picker: in a live kernel only (groove notebook open tune-explorer, with "
    f"{install_command('lab')}); the table above lists every condition."
)


def picker_or_hint(result: TuneResult, analysis: Analysis) -> Any:
    """The picker widget in a live kernel; its one-line text form under the headless
    runner, so no widget traffic runs for nothing."""
    if headless():
        return html_output(box(MUTED, escape(HEADLESS_PICKER_HINT)))
    return ConditionPicker(result, analysis).widget
