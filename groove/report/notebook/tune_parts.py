"""What the tune explorer shows the same way for groove's grid and an engine's family grid:
the leave-one-query-out facts, the folds as a table, the gates as a checklist.

Each reads a frame or a result of groove.tuning and lays it out; the two grids differ only
in how a condition is named (the caller passes the names).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from groove.report import plots
from groove.report.notebook.html_parts import BAD, MUTED, OK, box, escape, facts, html_output
from groove.tuning.gates import ADOPT_MIN_MEAN_DELTA, Gate, se_bound

if TYPE_CHECKING:
    import pandas as pd

    from groove.report.plots import Loo


def loo_facts(loo: Loo) -> Any:
    """The refit, the held-out mean delta, its SEs, the sign test and the stability."""
    sign = loo.sign_test
    return facts(
        [
            ("refit (all effective queries)", loo.refit.label),
            ("mean held-out delta", f"{loo.mean_delta:+.4f} (floor {ADOPT_MIN_MEAN_DELTA:.2f})"),
            ("paired SE (SD / sqrt(N))", f"{loo.paired_se:.4f}; 3 x SE = {se_bound(loo):.4f}"),
            (
                "sign test",
                f"{sign.improved} improved / {sign.degraded} degraded / {sign.tied} tied, "
                f"two-sided p = {sign.p_value:.4f}",
            ),
            ("selection stability", f"{plots.stability_text(loo)} picked the refit"),
        ]
    )


def folds_view(folds: pd.DataFrame, picks: Sequence[str]) -> pd.DataFrame:
    """A folds frame of groove.tuning (``query``, ``held_out_delta``, ``refit``) as the
    notebook names its columns, with ``picks`` the name of each fold's condition."""
    import pandas as pd

    return pd.DataFrame(
        {
            "held-out query": folds["query"],
            "fold's pick": list(picks),
            "is the refit": folds["refit"].astype(bool),
            "d_j (ΔnDCG@5)": folds["held_out_delta"].astype(float),
        }
    )


def gates_checklist(gates: Sequence[Gate]) -> Any:
    """The five adoption gates, each ✔ or ✖ with the sentence that explains it."""
    items = "".join(
        f"<li style='color:{OK if g.passed else BAD}'>{'✔' if g.passed else '✖'} "
        f"<b>{escape(g.name)}</b>: {escape(g.detail)}</li>"
        for g in gates
    )
    return html_output(f"<ol>{items}</ol>")


def adopt_box(label: str, how: str) -> Any:
    """The recommendation to adopt the condition ``label``; ``how`` (HTML) says how."""
    return html_output(box(OK, f"<b>Recommendation: {escape(label)}</b><br>{how}"))


def keep_box(keep: str, reasons: Sequence[str], after: str = "") -> Any:
    """The recommendation to keep ``keep`` (HTML), with the failed gates' reasons."""
    items = "".join(f"<li>{escape(r)}</li>" for r in reasons)
    return html_output(box(MUTED, f"<b>Recommendation: keep {keep}</b><ul>{items}</ul>{after}"))
