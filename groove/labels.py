"""How groove names a place in the knowledge base for a reader: ``path › heading``.

One rule for the search output, the eval reports, the DataFrames and the notebook views;
a hit or expected entry without a heading is named by its path alone.
"""

from __future__ import annotations


def location_label(path: str, heading: str | None) -> str:
    return f"{path} › {heading}" if heading else path
