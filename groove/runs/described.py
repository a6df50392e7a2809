"""What a run was, in the words the CLI uses: its settings, and how two runs differ.

Every run stores its effective settings (``RunRecord.settings``) as short strings keyed by
the setting's name (``limit``: ``"10"``, ``lexical``: ``"auto"``, ``mmr``: ``"off"``). A run
stored before groove kept them is described from its fingerprint, which holds every
setting that changes what is measured; the gate's own settings are then unknown.

``setting_changes`` words a difference as ``groove eval`` prints it (``lexical auto ->
trigram``, ``mmr off -> on (lambda 0.7)``, ``mmr_lambda 0.7 -> 0.5``), and
``differing_settings`` names the settings that tell a list of runs apart: the columns
``History.runs_frame`` shows beside each run's id and name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from groove.config import FusionConfig

if TYPE_CHECKING:
    from groove.runs.fingerprint import Fingerprint
    from groove.runs.record import RunRecord

# The order settings are listed in: what is measured first, then the gate's own.
ORDER = (
    "retriever",
    "model",
    "reranker",
    "limit",
    "k",
    "lexical",
    "mmr",
    "mmr_lambda",
    "mmr_same_doc_penalty",
    "parent_retriever",
    "rrf_k",
    "bm25_weights",
    "context",
    "golden",
    "regression_gate",
    "regression_threshold",
    "alpha",
)
GOLDEN_HASH_SHOWN = 8  # characters of the golden file's hash that name its version


def number(value: float | int) -> str:
    """A setting's number as a person writes it: 60, 0.7, 0.05 (no float noise)."""
    return format(float(value), ".6g") if isinstance(value, float) else str(value)


def fingerprint_settings(fingerprint: Fingerprint) -> dict[str, str]:
    """The settings a fingerprint records, each as a short string."""
    out: dict[str, str] = {}
    if fingerprint.retriever is not None:
        out["retriever"] = str(fingerprint.retriever.get("name", "?"))
    out["model"] = fingerprint.model
    out["reranker"] = fingerprint.reranker or "none"
    out["limit"] = str(fingerprint.limit)
    out["k"] = ",".join(str(k) for k in fingerprint.k_values)
    out["lexical"] = fingerprint.lexical or "none"
    mmr = fingerprint.mmr
    out["mmr"] = "on" if mmr is not None else "off"
    if mmr is not None:
        out["mmr_lambda"] = number(mmr["lambda"])
        out["mmr_same_doc_penalty"] = number(mmr["same_doc_penalty"])
    out["parent_retriever"] = "on" if fingerprint.parent_retriever is not None else "off"
    fusion = fingerprint.fusion
    if fusion is not None:
        if "rrf_k" in fusion:
            out["rrf_k"] = plain(fusion["rrf_k"])
        weights = ("bm25_heading_weight", "bm25_context_weight", "bm25_content_weight")
        if all(name in fusion for name in weights):
            out["bm25_weights"] = ",".join(plain(fusion[name]) for name in weights)
    if fingerprint.context is not None:
        out["context"] = str(fingerprint.context.get("mode", "?"))
    out["golden"] = fingerprint.golden_hash[:GOLDEN_HASH_SHOWN]
    return out


# A run records these only when they differ from the built-in (as its fingerprint does): one
# that does not record them had these values.
_BUILT_IN = {
    "rrf_k": number(FusionConfig().rrf_k),
    "bm25_weights": ",".join(number(weight) for weight in FusionConfig().weights),
    "context": "off",
}


def gate_settings(gate: str, threshold: float, alpha: float) -> dict[str, str]:
    """The regression gate's settings of a run (not part of its fingerprint)."""
    return {
        "regression_gate": gate,
        "regression_threshold": number(threshold),
        "alpha": number(alpha),
    }


def run_settings(record: RunRecord) -> dict[str, str]:
    """The run's settings: the stored ones, else those its fingerprint records."""
    stored = record.settings
    described = dict(stored) if stored else fingerprint_settings(record.fingerprint)
    return {name: described[name] for name in _ordered(described)}


def setting_changes(before: Mapping[str, str], now: Mapping[str, str]) -> tuple[str, ...]:
    """Each setting that differs, worded as the CLI words it: ``lexical auto -> trigram``;
    ``golden changed`` for another golden file. A setting only one side knows (the gate's,
    for a run stored before groove kept them) is not a change, unless not knowing it means
    the built-in value (``_BUILT_IN``)."""
    changes = []
    for name in _ordered({*before, *now}):
        was, is_ = before.get(name, _BUILT_IN.get(name)), now.get(name, _BUILT_IN.get(name))
        if was is None or is_ is None or was == is_:
            continue
        if name == "golden":
            changes.append("golden changed")
        elif name == "mmr" and is_ == "on":
            changes.append(f"mmr {was} -> on{_mmr_values(now)}")
        else:
            changes.append(f"{name} {was} -> {is_}")
    return tuple(changes)


def _mmr_values(now: Mapping[str, str]) -> str:
    """`` (lambda 0.7)``: the values MMR was switched on with, which the run before lacks (so
    they are no change of their own); the penalty only when it is not the built-in 0."""
    values = [f"lambda {now['mmr_lambda']}"] if "mmr_lambda" in now else []
    penalty = now.get("mmr_same_doc_penalty")
    if penalty is not None and float(penalty) != 0:
        values.append(f"same_doc_penalty {penalty}")
    return f" ({', '.join(values)})" if values else ""


def record_changes(before: RunRecord, now: RunRecord) -> tuple[str, ...]:
    return setting_changes(run_settings(before), run_settings(now))


def differing_settings(runs: Sequence[Mapping[str, str]]) -> tuple[str, ...]:
    """The settings whose value is not the same in every run (a missing value counts)."""
    names = _ordered({name for settings in runs for name in settings})
    return tuple(name for name in names if len({s.get(name) for s in runs}) > 1)


def label(record: RunRecord) -> str:
    """What a run is called wherever runs are listed: its name, else its id."""
    return record.name or record.id


def _ordered(names: Iterable[str]) -> list[str]:
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(names, key=lambda name: (rank.get(name, len(ORDER)), name))


def plain(value: Any) -> str:
    """A stored setting read back as the string it was written as."""
    return value if isinstance(value, str) else number(value)
