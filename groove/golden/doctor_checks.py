"""The golden set's own problems, checked by ``groove golden doctor`` beside the broken
entries:

* ``duplicate-query``: two ids ask the same text (compared after folding case, spaces and
  punctuation); ``near-duplicate-query``: their words overlap by ``NEAR_DUPLICATE`` or
  more (Jaccard over word sets) with one text at most a fifth longer than the other. The
  per-query diff pairs runs by id, and the same question counted twice weighs double.
* ``opposite-judgements``: an expected entry of one query judged not relevant for the same
  query, or for a (near-)duplicate of it (the judgements file beside the golden file).
* ``empty-section``: an entry whose heading is a chunk with no text: a hit on it finds a
  heading and nothing else.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations

from groove.golden.doctor import IndexView
from groove.golden.judgements import Judgements
from groove.golden.proposals import (
    CHECK_DUPLICATE_QUERY,
    CHECK_EMPTY_SECTION,
    CHECK_NEAR_DUPLICATE_QUERY,
    CHECK_OPPOSITE_JUDGEMENTS,
    GoldenCheck,
)
from groove.golden.queries import GoldenQuery
from groove.labels import location_label
from groove.metrics import RankedHit, is_hit

NEAR_DUPLICATE = 0.8
_LENGTH_RATIO = 1.2
_WORD = re.compile(r"\w+")


def folded(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold()))


def duplicate_checks(queries: Sequence[GoldenQuery]) -> tuple[GoldenCheck, ...]:
    """Pairs of queries (distinct ids) that ask the same, or nearly the same, question."""
    texts = [folded(q.query) for q in queries]
    words = [frozenset(t.split()) for t in texts]
    out = []
    for i, j in _candidate_pairs(texts, words):
        a, b = queries[i], queries[j]
        if a.id == b.id:
            continue  # the duplicate-query-id finding of every eval says it already
        if texts[i] == texts[j]:
            out.append(GoldenCheck(CHECK_DUPLICATE_QUERY, (a.id, b.id), "the same query text"))
            continue
        short, long_ = sorted((len(texts[i]), len(texts[j])))
        if not short or long_ > _LENGTH_RATIO * short:
            continue
        union = words[i] | words[j]
        overlap = len(words[i] & words[j]) / len(union) if union else 0.0
        if overlap >= NEAR_DUPLICATE:
            detail = f"nearly the same query text ({overlap:.0%} of the words shared)"
            out.append(GoldenCheck(CHECK_NEAR_DUPLICATE_QUERY, (a.id, b.id), detail))
    return tuple(out)


def _candidate_pairs(
    texts: Sequence[str], words: Sequence[frozenset[str]]
) -> list[tuple[int, int]]:
    """The pairs (i < j) that can be equal or reach NEAR_DUPLICATE, without comparing all
    pairs: two word sets with Jaccard >= t share at least one of the rarest
    ``len(x) - ceil(t * len(x)) + 1`` words of each (prefix filtering); equal texts share
    everything, empty ones are grouped by text."""
    frequency: Counter[str] = Counter(w for ws in words for w in ws)
    by_word: dict[str, list[int]] = defaultdict(list)
    by_text: dict[str, list[int]] = defaultdict(list)
    for i, ws in enumerate(words):
        by_text[texts[i]].append(i)
        rarest = sorted(ws, key=lambda w: (frequency[w], w))
        for w in rarest[: len(rarest) - math.ceil(NEAR_DUPLICATE * len(rarest)) + 1]:
            by_word[w].append(i)
    pairs = {(a, b) for group in by_word.values() for a, b in combinations(group, 2)}
    pairs |= {(a, b) for group in by_text.values() for a, b in combinations(group, 2)}
    return sorted(pairs)


def opposite_judgement_checks(
    queries: Sequence[GoldenQuery],
    judgements: Judgements,
    duplicates: Sequence[GoldenCheck],
) -> tuple[GoldenCheck, ...]:
    """Expected entries judged not relevant for the same query or a duplicate of it."""
    twins: dict[str, set[str]] = {q.id: {q.id} for q in queries}
    for check in duplicates:
        a, b = check.query_ids
        twins.setdefault(a, {a}).add(b)
        twins.setdefault(b, {b}).add(a)
    out = []
    for query in queries:
        for entry in query.expected:
            for other in sorted(twins.get(query.id, {query.id})):
                for j in judgements.for_query(other):
                    if j.relevant or not is_hit(entry, RankedHit(0, j.path, j.heading, 0.0)):
                        continue
                    where = "itself" if other == query.id else other
                    label = location_label(entry.path, entry.heading)
                    detail = f"{label} is expected, and judged not relevant for {where}"
                    ids = (query.id,) if other == query.id else (query.id, other)
                    out.append(GoldenCheck(CHECK_OPPOSITE_JUDGEMENTS, ids, detail))
    return tuple(out)


def empty_section_checks(
    queries: Sequence[GoldenQuery], view: IndexView
) -> tuple[GoldenCheck, ...]:
    """Entries whose heading names a chunk that holds no text."""
    out = []
    for query in queries:
        for entry in query.expected:
            if entry.heading is None:
                continue
            chunk = view.heading_chunk(entry.path, entry.heading)
            if chunk is not None and not chunk.content.strip():
                label = location_label(entry.path, entry.heading)
                out.append(GoldenCheck(CHECK_EMPTY_SECTION, (query.id,), f"{label} has no text"))
    return tuple(out)
