"""The HTML export of a report notebook: offline, and verdict first.

nbconvert's lab template loads require.js and MathJax from a CDN; the report needs
neither (its tables carry their own scripts, it has no formulas, its widgets are exported
as text), and a page read offline or in a CI artefact viewer logged two failed requests.
The template below drops both.

The set-up cells (parameters, the runner's injected parameters, imports and the call that
computes the outcome) are code a reader of the report does not need before the verdict:
their input is left out of the page, and in the executed notebook (JupyterLab) they are
collapsed, so the first screen shows the verdict.
"""

from __future__ import annotations

from typing import Any

TEMPLATE_NAME = "groove_offline.html.j2"
OFFLINE_TEMPLATE = (
    "{%- extends 'lab/index.html.j2' -%}\n"
    "{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}\n"
    "{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}\n"
)
# cells whose input the page leaves out and JupyterLab shows collapsed
SETUP_TAGS = ("parameters", "injected-parameters", "hide-input")


def html_exporter() -> Any:
    """nbconvert's HTML exporter with the offline template and the set-up inputs removed."""
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    config = Config()
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_input_tags = set(SETUP_TAGS)
    return HTMLExporter(
        config=config,
        template_name="lab",
        template_file=TEMPLATE_NAME,
        extra_loaders=[DictLoader({TEMPLATE_NAME: OFFLINE_TEMPLATE})],
    )


def collapse_setup(notebook: Any) -> bool:
    """Mark the parameters cells of ``notebook`` collapsed (JupyterLab's ``source_hidden``;
    the bundled notebooks declare it for their other set-up cells, papermill's injected
    cell does not); True when a cell changed."""
    changed = False
    for cell in notebook.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.get("cell_type") == "code" and any(tag in SETUP_TAGS[:2] for tag in tags):
            jupyter = cell.metadata.setdefault("jupyter", {})
            if not jupyter.get("source_hidden"):
                jupyter["source_hidden"] = True
                changed = True
    return changed
