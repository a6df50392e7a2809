"""HTML pieces both notebooks' views share: colours, escaping, a box, a facts table, images."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from groove.report import plots

if TYPE_CHECKING:
    from matplotlib.figure import Figure

OK, WARN, BAD, MUTED = "#2e7d32", "#ef6c00", "#c62828", "#757575"


def html_output(text: str) -> Any:
    from IPython.display import HTML

    return HTML(text)


def image(fig: Figure) -> Any:
    """A figure as a PNG image output (what the HTML export and the screenshots show)."""
    from IPython.display import Image

    return Image(data=plots.png_bytes(fig), format="png")


def escape(value: object) -> str:
    return html.escape(str(value))


def box(colour: str, body: str) -> str:
    style = f"border-left:4px solid {colour};padding:4px 10px;margin:4px 0"
    return f'<div style="{style}">{body}</div>'


def facts(pairs: Sequence[tuple[str, object]]) -> Any:
    """A two-column table of plain-text facts (both sides escaped)."""
    cells = "".join(
        f"<tr><th style='text-align:left'>{escape(k)}</th>"
        f"<td style='text-align:left'>{escape(v)}</td></tr>"
        for k, v in pairs
    )
    return html_output(f"<table>{cells}</table>")
