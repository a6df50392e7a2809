"""How long each query's retrieval took: per query, and per leg where the legs are timed.

A retriever that times its queries keeps a ``QueryTiming`` per query id in ``timings``
(seconds of wall time, ``time.perf_counter``): groove's engine and the built-in engines
time each leg too; a command or HTTP retriever times the whole answer. A run file is no
live retrieval and has none. ``summarise`` turns them into the run's ``Latency``: the
50th and 95th percentiles and the maximum in milliseconds, overall and per leg.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class QueryTiming:
    """One query's retrieval: ``total`` seconds, and ``legs`` (name -> seconds) when timed."""

    total: float
    legs: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Spread:
    """p50, p95 and max of a set of durations, in milliseconds."""

    p50_ms: float
    p95_ms: float
    max_ms: float

    @classmethod
    def of(cls, seconds: Iterable[float]) -> Spread:
        ms = np.asarray(list(seconds), dtype=float) * 1000.0
        return cls(float(np.percentile(ms, 50)), float(np.percentile(ms, 95)), float(ms.max()))

    def to_dict(self) -> dict[str, float]:
        return {"p50_ms": self.p50_ms, "p95_ms": self.p95_ms, "max_ms": self.max_ms}


@dataclass(frozen=True)
class Latency:
    """The run's retrieval latency: over every query, and per leg where timed."""

    queries: int
    total: Spread
    legs: Mapping[str, Spread] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"queries": self.queries, **self.total.to_dict()}
        out["legs"] = {name: spread.to_dict() for name, spread in self.legs.items()}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Latency:
        def spread(d: Mapping[str, Any]) -> Spread:
            return Spread(float(d["p50_ms"]), float(d["p95_ms"]), float(d["max_ms"]))

        legs = {str(k): spread(v) for k, v in (data.get("legs") or {}).items()}
        return cls(int(data["queries"]), spread(data), legs)

    def line(self) -> str:
        """One line for a text report."""
        text = (
            f"latency: p50 {_ms(self.total.p50_ms)}, p95 {_ms(self.total.p95_ms)}, "
            f"max {_ms(self.total.max_ms)} per query ({self.queries} queries)"
        )
        legs = "; ".join(
            f"{name} p50 {_ms(s.p50_ms)}, p95 {_ms(s.p95_ms)}" for name, s in self.legs.items()
        )
        return f"{text}; {legs}" if legs else text


def _ms(value: float) -> str:
    return f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"


def summarise(timings: Mapping[str, QueryTiming], order: Iterable[str]) -> Latency | None:
    """The ``Latency`` of the queries ``order`` names that were timed; None when none was."""
    found = [timings[qid] for qid in order if qid in timings]
    if not found:
        return None
    names: list[str] = []
    for t in found:
        names += [name for name in t.legs if name not in names]
    legs = {name: Spread.of(t.legs[name] for t in found if name in t.legs) for name in names}
    return Latency(len(found), Spread.of(t.total for t in found), legs)
