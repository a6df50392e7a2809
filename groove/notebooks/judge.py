"""The judging view: one pooled hit at a time, judged with a key press, saved at once.

It shows the query, its expected answers, the candidate's ``path › heading``, the rankings
that brought it and its text, and takes a verdict: relevant (``r`` or ``1``), not
relevant (``n`` or ``0``), skip (``s``). Each verdict is written to the judgements file
before the next candidate shows (groove.golden.judgements: atomic, under a lock), so
closing the tab loses nothing. The queue is the pool minus what is judged, so opening the
view again resumes at the first candidate nobody has judged yet; a skipped candidate goes
to the back of this session's queue and comes back next time.

Keys: ipywidgets has no key events of its own and JupyterLab does not run scripts in
outputs, so the view has a small key box: click it once, then every key typed there is a
verdict (the box empties itself). The buttons do the same with the mouse.

Two buttons finish the loop: "apply" adds the relevant judgements to the golden YAML
(groove.judging.apply) and "run eval" runs the eval as ``groove eval`` does (appending
the run to the history) and shows its report, where the golden-changed note appears.

Without ipywidgets in the kernel the view refuses with a NotebookError naming what to
install; without the front end in JupyterLab (jupyterlab_widgets) the output shows a
line saying so instead of the view (the widget's plain-text form).
"""

from __future__ import annotations

import functools
import html
import importlib.util
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from groove.cards import clip
from groove.errors import Face, GrooveError, NotebookError
from groove.evaluation.settings import EvalSettings
from groove.golden.judgements import (
    judgements_path,
    load_judgements,
    save_judgements,
    stamped,
)
from groove.install import install_command
from groove.judging.pool import Candidate, Pool
from groove.labels import location_label
from groove.settings import JUDGE
from groove.settings.signatures import offers
from groove.settings.spelling import spelled

INSTALL_HINT = f"{install_command('lab')} (ipywidgets, JupyterLab and jupyterlab_widgets)"
NO_FRONT_END = (
    "The judging view did not render: this Jupyter has no widget front end. "
    f"Install it with: {install_command('lab')} (jupyterlab_widgets), then reload the page."
)
KEYS = {"r": True, "1": True, "y": True, "n": False, "0": False, "s": None}


def require_widgets() -> Any:
    """ipywidgets, or a NotebookError that says what to install."""
    if importlib.util.find_spec("ipywidgets") is None:
        raise NotebookError("the judging view needs ipywidgets in this kernel", INSTALL_HINT)
    import ipywidgets

    return ipywidgets


class JudgeView:
    """The judging widget over ``pool``; display it (it is the last value of a cell)."""

    def __init__(
        self,
        pool: Pool,
        settings: EvalSettings,
        by: str,
        *,
        evaluate: Callable[[EvalSettings], str] | None = None,
    ) -> None:
        widgets = require_widgets()
        self.pool = pool
        self.settings = settings
        self.by = by
        self._evaluate = evaluate
        self.path = judgements_path(settings.golden_path)
        judged = load_judgements(self.path)
        self.queue: list[Candidate] = [
            c for c in pool.candidates if judged.find(c.query_id, c.path, c.heading) is None
        ]
        # Progress counts the hits of these sources judged in earlier sessions too.
        self.done = pool.judged + len(pool.candidates) - len(self.queue)
        self.total = pool.judged + len(pool.candidates)
        self.skipped = 0
        self.status = widgets.HTML()
        self.bar = widgets.IntProgress(min=0, max=max(self.total, 1), value=self.done)
        self.card = widgets.HTML()
        self.keys = widgets.Text(
            placeholder="click here, then type r / n / s",
            description="keys",
            continuous_update=True,
            layout=widgets.Layout(width="22em"),
        )
        self.keys.add_class("groove-judge-keys")
        self.keys.observe(self._typed, names="value")
        self.note = widgets.Text(placeholder="note (optional, saved with the next verdict)")
        buttons = [
            self._button(widgets, "relevant (r)", "success", lambda _: self.verdict(True)),
            self._button(widgets, "not relevant (n)", "danger", lambda _: self.verdict(False)),
            self._button(widgets, "skip (s)", "", lambda _: self.verdict(None)),
        ]
        finish = [
            self._button(widgets, "apply to golden file", "info", lambda _: self.apply()),
            self._button(widgets, "run eval", "", lambda _: self.run_eval()),
        ]
        self.log = widgets.HTML()
        self.widget = _box_type()(
            [
                widgets.HBox([self.bar, self.status]),
                self.card,
                widgets.HBox([self.keys, *buttons]),
                self.note,
                widgets.HBox(finish),
                self.log,
            ]
        )
        self.widget.add_class("groove-judge")
        self._show()

    @staticmethod
    def _button(widgets: Any, label: str, style: str, on_click: Callable[[Any], None]) -> Any:
        button = widgets.Button(description=label, button_style=style)
        button.on_click(on_click)
        return button

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    @property
    def current(self) -> Candidate | None:
        return self.queue[0] if self.queue else None

    def _typed(self, change: dict[str, Any]) -> None:
        text = str(change["new"])
        if not text:
            return
        self.keys.value = ""  # fires again with "", ignored above
        for key in text.lower():
            if key in KEYS:
                self.verdict(KEYS[key])

    def verdict(self, relevant: bool | None) -> None:
        """Save a verdict on the current candidate (None: skip it) and show the next."""
        c = self.current
        if c is None:
            return
        self.queue.pop(0)
        if relevant is None:
            self.queue.append(c)
            self.skipped += 1
        else:
            note = self.note.value.strip() or None
            judgement = stamped(c.query_id, c.path, c.heading, relevant, self.by, note)
            save_judgements(self.path, [judgement])
            self.note.value = ""
            # A hit without a heading is judged for its whole file (the golden hit rule),
            # so the file's other sections of this query leave the queue with it.
            left = [
                q
                for q in self.queue
                if q.query_id != c.query_id or not judgement.covers(q.path, q.heading)
            ]
            self.done += 1 + len(self.queue) - len(left)
            self.queue = left
        self._show()

    def apply(self) -> None:
        from groove.judging.apply import apply

        try:
            result = apply(self.settings.golden_path, load_judgements(self.path))
        except GrooveError as exc:
            self.log.value = _error(exc)
            return
        self.log.value = "<pre class='groove-judge-log'>" + html.escape("\n".join(result.lines()))
        self.log.value += "</pre>"

    def run_eval(self) -> None:
        try:
            text = (self._evaluate or _eval_text)(self.settings)
        except GrooveError as exc:
            self.log.value = _error(exc)
            return
        self.log.value = f"<pre class='groove-judge-log'>{html.escape(text)}</pre>"

    def _show(self) -> None:
        self.bar.value = self.done
        left = len(self.queue)
        self.status.value = (
            f"<b>{self.done} of {self.total} judged</b> · {left} left"
            + (f" · {self.skipped} skipped" if self.skipped else "")
            + f" · saved to <code>{html.escape(self.path.name)}</code>"
        )
        c = self.current
        self.card.value = _card(c) if c is not None else _done(self.total)


@functools.cache
def _box_type() -> Any:
    """A VBox whose plain-text form says what is missing when no front end draws it (made
    on first use: ipywidgets is imported only when a view is built)."""
    import ipywidgets

    class JudgeBox(ipywidgets.VBox):
        def _repr_mimebundle_(self, **kwargs: Any) -> Any:
            bundle = super()._repr_mimebundle_(**kwargs)
            if isinstance(bundle, dict):
                bundle["text/plain"] = NO_FRONT_END
            return bundle

    return JudgeBox


def _card(c: Candidate) -> str:
    expected = "".join(
        f"<li><code>{html.escape(location_label(e.path, e.heading))}</code></li>"
        for e in c.expected
    )
    label = html.escape(location_label(c.path, c.heading))
    if c.heading is None and c.lead_title:
        label += (
            f" <small>(its opening text, titled “{html.escape(clip(c.lead_title, 80))}”)</small>"
        )
    elif c.heading is None:
        label += " <small>(the text before its first heading)</small>"
    return (
        "<div class='groove-judge-card' style='border:1px solid #ccc;padding:8px;"
        "border-radius:6px;max-width:60em'>"
        f"<div><small>query <code>{html.escape(c.query_id)}</code></small></div>"
        f"<div style='font-size:1.15em;margin:4px 0'><b>{html.escape(c.query)}</b></div>"
        f"<div><small>expected:</small><ul style='margin:2px 0'>{expected}</ul></div>"
        f"<div class='groove-judge-hit' style='margin-top:6px'><b>{label}</b> "
        f"<small>brought by {html.escape(c.sources)}</small></div>"
        "<div style='white-space:pre-wrap;background:#f7f7f7;padding:6px;margin-top:4px'>"
        f"{html.escape(c.snippet) or '<i>(no text: the index is not available)</i>'}</div>"
        "</div>"
    )


def _done(total: int) -> str:
    return (
        f"<div class='groove-judge-card'><b>All {total} pooled hits are judged.</b> "
        "Apply them to the golden file, then run the eval.</div>"
    )


def _error(exc: GrooveError, face: Face = "api") -> str:
    """An error box, the error worded as ``face`` says it: the judge notebook's
    parameters, else (the view's buttons) the API's keywords, as ``groove.judge`` took them."""
    message, hint = spelled(exc, face)
    tail = f"<br>hint: {html.escape(hint)}" if hint else ""
    return f"<pre class='groove-judge-log'>Error: {html.escape(message)}{tail}</pre>"


def _eval_text(settings: EvalSettings) -> str:
    """``groove eval``'s text report (the run is appended to the history, as the CLI does)."""
    from groove.evaluation import run as evaluation
    from groove.report import eval_text

    saving = replace(settings, history=True, save_history=True, diff=True)
    return eval_text.render(evaluation.run(saving))


@offers(JUDGE, "notebook")
def open_view(**parameters: Any) -> Any:
    """The judge notebook's one call: its parameters (groove.settings.JUDGE) in, the view
    out; bad input shows as an error box, as in the report notebooks."""
    from IPython.display import HTML

    try:
        return build_view(**parameters)
    except GrooveError as exc:  # the judge notebook's boundary: its parameters' words
        return HTML(_error(exc, "notebook"))


def build_view(**given: Any) -> JudgeView:
    """Parse ``given`` against groove.settings.JUDGE, pool, and build the view."""
    from groove.config import load_config
    from groove.golden.judgements import judge_name
    from groove.judging.run import pool, resolve
    from groove.resolve import resolve as resolve_settings

    require_widgets()  # before any retrieval: say what is missing first
    parsed = {name: JUDGE[name].parse(value) for name, value in given.items()}
    config = load_config(parsed.pop("config", None))
    request = resolve(config, parsed)
    judge = resolve_settings(JUDGE, config, parsed)["judge"]  # [eval].judge
    return JudgeView(pool(request), request.settings, judge_name(parsed.get("by"), judge))
