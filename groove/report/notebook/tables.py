"""Interactive tables for hundreds of rows: sortable, filterable, paged, and offline.

A notebook shows a table with ``interactive(frame, ...)``; once per notebook, before the
first table, a cell shows ``scripts()``: the DataTables bundle of the ``itables`` package,
embedded in the output (about 1 MB, base64) so that both a live JupyterLab and the HTML
export page work without a network (a CDN would leave the exported page blank offline).
Without JavaScript (an untrusted notebook, a text viewer) each table falls back to its
first page as plain HTML, which itables writes next to the script; a table longer than a
page then adds a line (removed by a script wherever scripts run) naming the place that
has every row: the HTML report the runner exports beside the notebook.

Cells may hold HTML (marks, line breaks): the caller escapes the text it puts into them,
``cell_html`` does it for plain values.
"""

from __future__ import annotations

import html
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

PAGE_LENGTH = 10
PAGE_CHOICES = (10, 25, 100, -1)
# Long text wraps between items, never inside one; the search box and pager stay compact.
CSS = (
    ".groove-table td{white-space:normal;vertical-align:top;text-align:left}"
    ".groove-table th{text-align:left}"
    ".groove-table .item{white-space:nowrap;display:inline-block;margin-right:.6em}"
    # text that needs room to read (a reason, a list of answers, a query), not a sliver
    ".groove-table .prose{display:inline-block;min-width:min(18em,20vw)}"
    ".groove-table .sentence{display:inline-block;min-width:min(13em,15vw)}"
    ".groove-table .line{white-space:nowrap;overflow:hidden;text-overflow:ellipsis;"
    "max-width:34em}"
)


def scripts() -> None:
    """Display the offline DataTables bundle (once per notebook, before the first table).

    itables' own offline mode; ``all_interactive=False`` leaves other DataFrames alone.
    """
    from itables import init_notebook_mode

    init_notebook_mode(all_interactive=False, connected=False)


def cell_html(value: object, digits: int = 3) -> str:
    """A plain value as escaped cell text; floats to ``digits`` places, None as a dash."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return html.escape(str(value))


def interactive(
    frame: pd.DataFrame,
    *,
    caption: str | None = None,
    page_length: int = PAGE_LENGTH,
    numeric: Sequence[str] = (),
) -> Any:
    """``frame`` (cells already HTML) as a paged, sortable, searchable table, in the order
    of its rows. ``numeric`` columns sort as numbers (their cells hold the number as text)."""
    from IPython.display import HTML
    from itables import to_html_datatable

    columns = list(frame.columns)
    numbers = [columns.index(c) for c in numeric if c in columns]
    defs: list[
        dict[str, Any]
    ] = [  # earlier definitions win: numbers right-aligned, everything else left
        {"targets": numbers, "type": "num", "className": "dt-right"},
        {"targets": "_all", "className": "dt-left"},
    ]
    body = to_html_datatable(
        frame,
        caption=caption,
        connected=False,
        allow_html=True,
        showIndex=False,
        maxBytes=0,  # never downsample: the table must hold every query
        pageLength=page_length,
        lengthMenu=list(PAGE_CHOICES),
        order=[],  # the frame's own order first; a click on a header sorts
        # a click anywhere on the header sorts, not only on its 12 x 20 px icon (itables'
        # default keeps the header text selectable instead)
        text_in_header_can_be_selected=False,
        columnDefs=defs,
        classes="display compact groove-table",
        style="table-layout:auto;width:100%;margin:0;caption-side:top",
        css=CSS,
    )
    return HTML(body + untrusted_note(len(frame), page_length))


def untrusted_note(rows: int, page_length: int = PAGE_LENGTH) -> str:
    """The line an untrusted notebook shows under a table it cannot page: where all
    ``rows`` are. Empty when the first page holds them all; a script removes it wherever
    the table itself runs (a trusted notebook, the HTML export)."""
    if rows <= page_length:
        return ""
    note_id = f"groove-untrusted-{uuid.uuid4().hex}"
    text = (
        f"Above: the first {page_length} of {rows:,} rows, because this notebook is not "
        "trusted and its tables cannot run here. Every row, sortable and searchable: the "
        "HTML report exported beside this notebook (same name, .html), or trust the "
        "notebook (JupyterLab: Trust Notebook in the command palette) and run it again."
    )
    return (
        f'<div id="{note_id}" class="groove-untrusted" style="margin:4px 0;color:#57606a">'
        f"{html.escape(text)}</div>"
        f'<script>document.getElementById("{note_id}")?.remove()</script>'
    )
