"""A command retriever for the tests that fuses stored legs itself, by the engines' plain
formulas written out here (not groove's fusion module), for one fusion given on the
command line:

    python fusing_adapter.py LEGS.jsonl FAMILY K WINDOW VECTOR_WEIGHT NORMALIZER

Each line of LEGS.jsonl is ``{"id", "legs"}``; the answer's hits are the fusion of the
legs (vector leg first), best first, ties to the hit seen first reading the vector leg then
the lexical leg, cut to the requested limit. A hit is known by its ``id`` when it has one,
else by its path and heading.
"""

from __future__ import annotations

import json
import math
import sys


def key(hit: dict) -> tuple:
    return ("id", str(hit["id"])) if "id" in hit else ("at", hit["path"], hit.get("heading"))


def normalise(scores: list[float], how: str) -> list[float]:
    if how == "minmax":
        lo, hi = min(scores), max(scores)
        return [1.0 if hi <= lo else (s - lo) / (hi - lo) for s in scores]
    if how == "l2":
        norm = math.sqrt(sum(s * s for s in scores))
        return [s / norm if norm > 0 else 0.0 for s in scores]
    raise SystemExit(f"normaliser {how} not written here")


def fuse(legs: dict, family: str, k: float, window: int, w_vec: float, how: str) -> list:
    cut = [legs["vector"][:window], legs["lexical"][:window]]
    weights = [w_vec, 1.0 - w_vec] if family != "rrf" else [1.0, 1.0]
    score: dict = {}
    first: dict = {}
    hit_of: dict = {}
    for leg, weight in zip(cut, weights, strict=True):
        if family == "convex":
            gains = [weight * g for g in normalise([h["score"] for h in leg], how)] if leg else []
        else:  # Elasticsearch's weighted RRF: weight / (k + rank), rank from 1
            gains = [weight / (k + rank) for rank in range(1, len(leg) + 1)]
        for hit, gain in zip(leg, gains, strict=True):
            kk = key(hit)
            first.setdefault(kk, len(first))
            hit_of.setdefault(kk, hit)
            score[kk] = score.get(kk, 0.0) + gain
    order = sorted(score, key=lambda kk: (-score[kk], first[kk]))
    return [{**hit_of[kk], "score": score[kk]} for kk in order]


def main() -> None:
    path, family, k, window, w_vec, how = sys.argv[1:7]
    with open(path, encoding="utf-8") as handle:
        stored = {str(a["id"]): a["legs"] for a in map(json.loads, handle) if a}
    for line in sys.stdin:
        request = json.loads(line)
        legs = stored.get(request["id"], {"lexical": [], "vector": []})
        hits = fuse(legs, family, float(k), int(window), float(w_vec), how)
        answer = {"id": request["id"], "hits": hits[: request["limit"]], "legs": legs}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
