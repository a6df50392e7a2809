"""The gate's word on golden rot: falls that come from expected answers the index lost.

Printed right after the regression message when some of the falling queries expect an
entry the index cannot match (the eval's ``rot``: the doctor's proposals). The exit code
stays the gate's; this says which falls are the golden file's, not retrieval's.
"""

from __future__ import annotations

from groove.evaluation.result import EvalRun

#: Proposals named in the message; the rest are counted (``groove golden doctor`` lists all).
NAMED = 3


def rot_message(run: EvalRun) -> str | None:
    falls = run.rot_falls()
    if not falls:
        return None
    falling = len(run.falling_queries())
    proposals = [p for _, found in falls for p in found]
    named = [
        f"{p.query_id}: {p.change_ascii} ({p.confidence})"
        if p.target is not None
        else f"{p.query_id}: {p.change_ascii.removesuffix(' -> -')} ({p.kind}, no candidate)"
        for p in proposals[:NAMED]
    ]
    more = len(proposals) - len(named)
    listed = "; ".join(named) + (f"; and {more} more" if more > 0 else "")
    return (
        f"groove eval: {len(falls)} of the {falling} falling queries expect answers that left "
        f"the index (golden rot, not retrieval): {listed}. "
        "Run `groove golden doctor` to see and fix them."
    )
