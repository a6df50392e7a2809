"""The FTS leg in numpy: FTS5's ``bm25()`` ranking, bit for bit, without scoring through SQL.

An OR of common words matches nearly every row, and FTS5 scores each one before
``ORDER BY ... LIMIT`` keeps a few (80% of a search at 50,000 chunks: docs/performance.md).
This module scores from the table's postings held in numpy (``store.postings``) with
FTS5's own arithmetic, in its own order, so the floats and the ranked list are the ones
SQL returns:

* per phrase ``i`` (a single token here): ``idf = log((N - n + 0.5) / (n + 0.5))``, clamped
  to 1e-6 when <= 0 (N: FTS5's row count, n: rows holding the token);
* per row: ``f`` = the column weights of the phrase's instances added one by one in column
  order, ``D`` = the row's tokens over all columns, ``avgdl`` = total tokens / N, and
  ``score += idf * ((f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl)))`` in phrase order
  from 0.0 (k1 = 1.2, b = 0.75); ``bm25 = -1.0 * score``;
* rows ranked by bm25, then lower rowid (the SQL's ``ORDER BY bm25(...), rowid``).

When every partial sum of ``f`` is exact (weights that are multiples of a power of two
small enough for the largest counts, such as the defaults), ``f`` is the dot product of the
counts and the weights; otherwise the weights are added one at a time as FTS5 does. A
token's per-row terms under one weight set (its impacts) are kept for later queries, at
most one float per posting in all; a query then adds its tokens' impacts row by row in
phrase order (``np.bincount``, which adds in input order).

Served: the porter table, queries whose phrases are one token each (FTS5's tokenizer cuts
them: ``store.postings.tokens``), weights finite and >= 0. Anything else (trigram phrases,
quoted multi-word phrases, odd weights) goes through SQL as before.

When the postings are read. ``groove index`` writes them beside the index (``persist``,
``store.postings_file``, checked against SQL once by the writer), and a connection maps that
file from its first query while it holds exactly what the index holds. Without a valid file,
reading them costs about as much as a few plain legs on the
same index (seconds at 50,000 chunks), so a connection reads them only once the plain legs
it ran on that table have cost as much as the read is expected to (``_SECONDS_PER_TOKEN``
times the table's tokens): a one-shot search never pays for it, a server or a long eval
pays at most twice what the better choice would have cost. ``prepare`` reads them now.
Postings serve while the index is unchanged (``store.postings.index_key``, checked on each
query); the first query served after a read is also run through SQL and compared, scores
bit for bit, and a mismatch (a platform whose libm or compiler rounds differently) turns the
numpy path off for that index state.
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from groove.engine.lexical import LexicalQuery
from groove.store import postings_file
from groove.store.leg_scores import bm25_scored
from groove.store.legs import PORTER, LexicalTable, Weights, bm25_ranked
from groove.store.postings import Postings, index_key, read_postings, recorded_size, tokens
from groove.store.sqlite import Connection

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6
_EXACT_SUMS = 2**53
#: Expected cost of reading postings, per token of the table (measured at 50,000 chunks
#: under load: 2.8 s for 6.15 M tokens).
_SECONDS_PER_TOKEN = 0.45e-6
#: Terms (weight sets x postings) computed at once: bounds the temporaries of a pass.
_TERMS_AT_ONCE = 2_000_000


@dataclass(frozen=True)
class Scorer:
    """Postings and what queries reuse: each row's length term of the denominator, and
    each (token, weights)'s per-row terms once computed (its impacts)."""

    postings: Postings
    length_term: np.ndarray  # per rowid: k1 * (1 - b + b * D / avgdl)
    largest: tuple[int, ...]  # the largest count in each column
    impacts: dict[tuple[str, Weights], np.ndarray] = field(default_factory=dict, compare=False)
    # The last ``scores`` call's matches (positive tokens -> their postings, the matched
    # rows and each posting's row among them): an explain's grid then scores a few of
    # those rows (``scores_of``) without looking the postings up again.
    recent: dict[tuple[str, ...], _Matched] = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, postings: Postings) -> Scorer:
        avgdl = float(postings.total_tokens) / float(postings.rows)
        # FTS5's expression, operation by operation: k1 * ((1 - b) + ((b * D) / avgdl)).
        length_term = K1 * ((1 - B) + ((B * postings.doc_length) / avgdl))
        tf = postings.tf
        largest = postings.largest
        if largest is None:  # a mapped file records it: no pass over every count
            largest = tuple(int(m) for m in tf.max(axis=1)) if tf.shape[1] else (0,) * len(tf)
        return cls(postings, length_term, largest)

    def top(
        self,
        positive: Sequence[str],
        negative: Sequence[str],
        weights: Weights,
        n: int,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(rowids, bm25) of the ``n`` best rows of ``positive`` OR-ed, less the rows holding
        a ``negative`` token: what ``ORDER BY bm25(...), rowid LIMIT n`` returns."""
        size = self.postings.size
        held = [self.impact(token, weights) for token in positive]
        held = [(docs, terms) for docs, terms in held if len(docs)]
        if not held:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        docs = np.concatenate([d for d, _ in held])
        # bincount adds each row's terms one by one in input order, from 0.0: phrase order.
        score = np.bincount(docs, weights=np.concatenate([t for _, t in held]), minlength=size)
        matched = np.zeros(size, dtype=bool)
        matched[docs] = True
        for token in negative:
            matched[self.postings.term(token)[0]] = False
        ids = np.flatnonzero(matched)
        bm25 = -1.0 * score[ids]
        if len(ids) > n:
            kth = np.partition(bm25, n - 1)[n - 1]
            keep = bm25 <= kth  # ties at the cut stay in; the rowid decides among them
            ids, bm25 = ids[keep], bm25[keep]
        order = np.lexsort((ids, bm25))[:n]
        return ids[order], bm25[order]

    def impact(self, token: str, weights: Weights) -> tuple[np.ndarray, np.ndarray]:
        """(rowids holding ``token``, its bm25 term in each), kept for the next query while
        the kept terms are no more than one per posting."""
        docs, tf = self.postings.term(token)
        found = self.impacts.get((token, weights))
        if found is not None:
            return docs, found
        p = self.postings
        terms = self._terms(self._idf(len(docs)), tf, self.length_term[docs], weights)
        if sum(len(t) for t in self.impacts.values()) + len(terms) > len(p.docs):
            self.impacts.clear()
        self.impacts[(token, weights)] = terms
        return docs, terms

    def tops(
        self,
        positive: Sequence[str],
        negative: Sequence[str],
        weight_sets: Sequence[Weights],
        n: int,
    ) -> tuple[list[tuple[int, ...]], int]:
        """``top``'s rowids for each weight set (a tune sweep), and how many rows match
        (the scores of every match: ``scores``)."""
        ids, columns = self.scores(positive, negative, weight_sets)
        out = [tuple(ids[_best(ids, bm25, n)].tolist()) for bm25 in columns]
        return out, len(ids)

    def scores(
        self, positive: Sequence[str], negative: Sequence[str], weight_sets: Sequence[Weights]
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """(rowids of every matching row, ascending; their bm25 under each weight set):
        the matched rows, each token's IDF and length terms found once, each weight set's
        terms ``impact``'s arithmetic added per row in phrase order as ``top`` does (not
        kept: a sweep's weight sets would crowd out a search's impacts)."""
        held = self._held(positive)
        if held is None:
            return np.zeros(0, dtype=np.int64), [np.zeros(0) for _ in weight_sets]
        # The matched rows, ascending, and each posting's place among them: a mark per row
        # of the table costs less than sorting the postings.
        marked = np.zeros(self.postings.size, dtype=bool)
        marked[held.docs] = True
        ids = np.flatnonzero(marked)
        slot = (np.cumsum(marked) - 1)[held.docs]
        self.recent.clear()
        self.recent[tuple(positive)] = _Matched(held, ids, slot)
        kept = np.ones(len(ids), dtype=bool)
        for token in negative:
            kept &= ~np.isin(ids, self.postings.term(token)[0])
        columns = self._sums(held, slot, len(ids), weight_sets)
        return ids[kept].astype(np.int64), [column[kept] for column in columns]

    def scores_of(
        self, positive: Sequence[str], weight_sets: Sequence[Weights], rows: np.ndarray
    ) -> list[np.ndarray]:
        """The bm25 of ``rows`` (ascending rowids, each a match) under each weight set: the
        floats ``scores`` gives those rows, found from their postings alone (each row's
        terms added in phrase order, as there). An explain's grid scores its few contenders
        so, not every match."""
        matched = self.recent.get(tuple(positive))
        at = np.searchsorted(matched.ids, rows) if matched is not None else None
        if matched is not None and at is not None and _holds(matched.ids, at, rows):
            # the postings ``scores`` just looked up, cut to ``rows``
            place = np.full(len(matched.ids), -1, dtype=np.int64)
            place[at] = np.arange(len(rows))
            slot = place[matched.slot]
            (found,) = np.nonzero(slot >= 0)
            return self._sums(matched.held.take(found), slot[found], len(rows), weight_sets)
        held = self._held(positive)
        if held is None or not len(rows):
            return [np.zeros(len(rows)) for _ in weight_sets]
        # Each posting's key (its token's place, its row) ascends: every (token, row) pair
        # of ``rows`` is looked up at once, token by token as the phrases come.
        size = self.postings.size
        keys = held.token * size + held.docs
        wanted = (np.arange(held.tokens)[:, None] * size + rows[None, :]).ravel()
        at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        (holding,) = np.nonzero(keys[at] == wanted)
        found = at[holding]
        return self._sums(held.take(found), holding % len(rows), len(rows), weight_sets)

    def _held(self, positive: Sequence[str]) -> _Held | None:
        """The postings of ``positive``'s tokens, one after the other (None: no row holds
        any), with each posting's IDF and length term."""
        held = [self.postings.term(token) for token in positive]
        held = [(docs, tf) for docs, tf in held if len(docs)]
        if not held:
            return None
        counts = [len(docs) for docs, _ in held]
        docs = np.concatenate([d for d, _ in held]).astype(np.int64)
        idf = np.repeat(np.array([self._idf(n) for n in counts], dtype=np.float64), counts)
        token = np.repeat(np.arange(len(held), dtype=np.int64), counts)
        tf = np.concatenate([tf for _, tf in held], axis=1)
        return _Held(len(held), token, docs, tf, idf, self.length_term[docs])

    def _sums(
        self, held: _Held, slot: np.ndarray, size: int, weight_sets: Sequence[Weights]
    ) -> list[np.ndarray]:
        """bm25 of ``size`` rows under each weight set: ``held``'s terms added into their
        row's ``slot`` in phrase order (bincount adds in input order, from 0.0), a block of
        weight sets in one bincount of (set, row) buckets. Each term is ``_terms``'
        arithmetic element by element, so the floats are those of one token at a time. The
        blocks bound the temporaries (a tune's 16 sets over a million postings)."""
        step = max(1, _TERMS_AT_ONCE // max(len(slot), 1))
        out: list[np.ndarray] = []
        for lo in range(0, len(weight_sets), step):
            out.extend(self._block_sums(held, slot, size, weight_sets[lo : lo + step]))
        return out

    def _block_sums(
        self, held: _Held, slot: np.ndarray, size: int, weight_sets: Sequence[Weights]
    ) -> list[np.ndarray]:
        if all(_sums_exact(w, self.largest) for w in weight_sets):
            # Every partial sum of f is exact, so one product of the weight matrix with the
            # counts gives each weight set's f bit for bit, whatever order it adds in.
            f = np.asarray(weight_sets, dtype=np.float64) @ held.tf.astype(np.float64)
            terms = held.idf * ((f * (K1 + 1.0)) / (f + held.length_term))
        else:
            terms = np.stack(
                [self._terms(held.idf, held.tf, held.length_term, w) for w in weight_sets]
            )
        buckets = (np.arange(len(weight_sets))[:, None] * size + slot[None, :]).ravel()
        sums = np.bincount(buckets, weights=terms.ravel(), minlength=len(weight_sets) * size)
        return list(-1.0 * sums.reshape(len(weight_sets), size))

    def _idf(self, holding: int) -> float:
        p = self.postings
        idf = math.log((p.rows - holding + 0.5) / (holding + 0.5))
        return IDF_FLOOR if idf <= 0.0 else idf

    def _terms(
        self, idf: float | np.ndarray, tf: np.ndarray, length_term: np.ndarray, weights: Weights
    ) -> np.ndarray:
        """One token's bm25 term in each row holding it (counts ``tf``, ``length_term``)."""
        f = _frequency(tf, weights, _sums_exact(weights, self.largest))
        terms: np.ndarray = idf * ((f * (K1 + 1.0)) / (f + length_term))
        return terms


@dataclass(frozen=True)
class _Held:
    """A query's postings, token after token in phrase order (rows ascending within a
    token), with what each posting's bm25 term needs besides the weights."""

    tokens: int  # tokens holding a row
    token: np.ndarray  # per posting: its token's place among them
    docs: np.ndarray  # per posting: its rowid (int64)
    tf: np.ndarray  # (columns, postings) counts
    idf: np.ndarray  # per posting: its token's IDF
    length_term: np.ndarray  # per posting: its row's k1 * (1 - b + b * D / avgdl)

    def take(self, at: np.ndarray) -> _Held:
        """The postings at ``at`` (ascending: their order is kept)."""
        return _Held(
            self.tokens,
            self.token[at],
            self.docs[at],
            self.tf[:, at],
            self.idf[at],
            self.length_term[at],
        )


@dataclass(frozen=True)
class _Matched:
    """One query's postings (``_Held``), its matched rows (ascending, exclusions not yet
    applied) and each posting's place among them."""

    held: _Held
    ids: np.ndarray
    slot: np.ndarray


def _holds(ids: np.ndarray, at: np.ndarray, rows: np.ndarray) -> bool:
    """Whether every one of ``rows`` is in ``ids`` (ascending), at ``at``."""
    return len(rows) > 0 and bool(np.all(ids[np.minimum(at, len(ids) - 1)] == rows))


def _best(ids: np.ndarray, bm25: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` lowest ``bm25``, ties to the lower id, best first."""
    if len(ids) > n:
        kth = np.partition(bm25, n - 1)[n - 1]
        (candidates,) = np.nonzero(bm25 <= kth)  # ties at the cut stay in
    else:
        candidates = np.arange(len(ids))
    order: np.ndarray = candidates[np.lexsort((ids[candidates], bm25[candidates]))[:n]]
    return order


@lru_cache(maxsize=256)
def _sums_exact(weights: Weights, largest: tuple[int, ...]) -> bool:
    """Whether adding the weights one instance at a time never rounds, for any row (no
    column holds more than ``largest`` instances): then the counts' dot product with the
    weights is the same float."""
    ratios = [w.as_integer_ratio() for w in weights]  # exact: every float is dyadic
    scale = max(d for _, d in ratios)  # a power of two, so every denominator divides it
    units = sum(abs(n * (scale // d)) * m for (n, d), m in zip(ratios, largest, strict=True))
    return units <= _EXACT_SUMS


def _frequency(tf: np.ndarray, weights: Weights, exact: bool) -> np.ndarray:
    """``f`` per row: the weights of the instances, summed in FTS5's order (column by
    column, one instance at a time)."""
    if exact:
        f = tf[0] * weights[0]
        for c in range(1, len(weights)):
            f = f + tf[c] * weights[c]
        return f
    f = np.zeros(tf.shape[1], dtype=np.float64)
    for c, w in enumerate(weights):
        column = tf[c]
        for t in range(int(column.max(initial=0))):
            f = np.where(column > t, f + w, f)
    return f


# ---------------------------------------------------------------- when to use it


@dataclass
class _State:
    """One connection's numpy path for one table."""

    scorer: Scorer | None = None
    verified: bool = False
    refused: tuple[object, ...] | None = None  # an index state whose check failed
    spent: float = 0.0  # seconds of plain legs since the postings were last read
    disabled: bool = False


_STATES: weakref.WeakKeyDictionary[Connection, dict[LexicalTable, _State]] = (
    weakref.WeakKeyDictionary()
)


def ranked(conn: Connection, lexical: LexicalQuery, weights: Weights, n: int) -> list[int]:
    """The FTS leg of ``lexical``: chunk ids, best bm25 first, ties to the lower id; the
    numpy path when it serves this query (module docstring), else SQL."""
    if lexical.match is None or n <= 0:
        return []
    state = _state(conn, lexical.leg)
    scorer = _ready(conn, lexical.leg, state) if state is not None else None
    phrases = _served(lexical, weights) if scorer is not None else None
    if state is None or scorer is None or phrases is None:
        started = time.perf_counter()
        found = bm25_ranked(conn, lexical.match, weights, n, lexical.leg)
        if state is not None:
            state.spent += time.perf_counter() - started
        return found
    ids, bm25 = scorer.top(*phrases, weights, n)
    if not state.verified:
        expected = bm25_scored(conn, lexical.match, weights, n, lexical.leg)
        if expected != list(zip(ids.tolist(), bm25.tolist(), strict=True)):
            state.refused, state.scorer = scorer.postings.key, None
            return [chunk_id for chunk_id, _ in expected]
        state.verified = True
    return ids.tolist()


def ranked_grid(
    conn: Connection, lexical: LexicalQuery, weight_sets: Sequence[Weights], n: int
) -> tuple[list[tuple[int, ...]], int] | None:
    """(``ranked``'s list for each weight set, how many rows match) from numpy, or None
    when the numpy path does not serve ``lexical`` (or its postings are not read: a tune
    ``prepare``s its connections). The first query served after a read is checked against
    SQL as in ``ranked``."""
    serving = _serving(conn, lexical, weight_sets)
    if serving is None or lexical.match is None:
        return None
    state, scorer, (positive, negative) = serving
    found = scorer.tops(positive, negative, weight_sets, n)
    if not state.verified:  # ranked checks top against SQL, and turns numpy off on a mismatch
        expected = ranked(conn, lexical, weight_sets[0], n)
        if not state.verified or expected != list(found[0][0]):
            return None
    return found


def scored(
    conn: Connection, lexical: LexicalQuery, weight_sets: Sequence[Weights]
) -> tuple[np.ndarray, np.ndarray] | None:
    """(rowids, ``scores[i, w]``: row ``i``'s bm25 under ``weight_sets[w]``) of every row
    matching ``lexical``, as ``store.ranks.fts_scores`` reads them, from numpy; or None
    when the numpy path does not serve ``lexical`` or its postings are not read. The first
    query served after a read is checked against SQL as in ``ranked``, over all matches."""
    serving = _serving(conn, lexical, weight_sets)
    if serving is None or lexical.match is None:
        return None
    state, scorer, (positive, negative) = serving
    ids, columns = scorer.scores(positive, negative, weight_sets)
    if not state.verified:  # ranked checks the first set's floats, turns numpy off on a mismatch
        order = np.lexsort((ids, columns[0])) if len(ids) else ids
        expected = ranked(conn, lexical, weight_sets[0], max(len(ids), 1))
        if not state.verified or expected != ids[order].tolist():
            return None
    return ids, np.stack(columns, axis=1).reshape(len(ids), len(weight_sets))


def scored_rows(
    conn: Connection, lexical: LexicalQuery, weight_sets: Sequence[Weights], rows: np.ndarray
) -> np.ndarray | None:
    """``scores[i, w]``: the bm25 of ``rows[i]`` (chunks matching ``lexical``) under
    ``weight_sets[w]``, as ``store.legs.bm25_columns`` reads them restricted to those rows;
    or None unless the numpy path serves ``lexical`` and was checked on this index state
    (by ``ranked`` or ``scored``: this call makes no check of its own)."""
    serving = _serving(conn, lexical, weight_sets)
    if serving is None or not serving[0].verified:
        return None
    _, scorer, (positive, _) = serving
    ordered = np.sort(np.asarray(rows, dtype=np.int64))
    columns = scorer.scores_of(positive, weight_sets, ordered)
    table = np.stack(columns, axis=1).reshape(len(ordered), len(weight_sets))
    back = np.searchsorted(ordered, rows)  # in the caller's order
    return table[back]


def _serving(
    conn: Connection, lexical: LexicalQuery, weight_sets: Sequence[Weights]
) -> tuple[_State, Scorer, tuple[tuple[str, ...], tuple[str, ...]]] | None:
    """(the connection's numpy state, its scorer, the first set's positive and negative
    terms) when numpy serves ``lexical`` under every weight set; else None. Reads the
    postings when they are due, whatever the answer."""
    state = _state(conn, lexical.leg)
    scorer = _ready(conn, lexical.leg, state) if state is not None else None
    served = [_served(lexical, w) for w in weight_sets]
    if state is None or scorer is None or None in served:
        return None
    return state, scorer, served[0] or ((), ())


def prepare(conn: Connection, table: LexicalTable = PORTER) -> bool:
    """Read ``table``'s postings now (a server, a benchmark); whether the numpy path is on."""
    state = _state(conn, table)
    if state is None or table != PORTER:
        return False
    state.spent = math.inf
    return _ready(conn, table, state) is not None


def disable(conn: Connection) -> None:
    """Never use the numpy path on ``conn`` (the plain side of a comparison)."""
    for table in (PORTER,):
        state = _state(conn, table)
        if state is not None:
            state.disabled, state.scorer = True, None


def _state(conn: Connection, table: LexicalTable) -> _State | None:
    try:
        tables = _STATES.setdefault(conn, {})
    except TypeError:  # a connection that cannot be weakly referenced: no cache
        return None
    return tables.setdefault(table, _State())


def _ready(conn: Connection, table: LexicalTable, state: _State) -> Scorer | None:
    """The valid scorer for ``conn``'s view of ``table``, read now if it has paid for itself."""
    if state.disabled or table != PORTER:
        return None
    key = index_key(conn, table)
    if state.scorer is not None:
        if state.scorer.postings.key == key:
            return state.scorer
        state.scorer, state.spent = None, 0.0  # the index changed: start counting again
    if key == state.refused:
        return None
    mapped = postings_file.load(conn, table)
    if mapped is not None:  # written by groove index: no read, no wait for it to pay
        state.scorer, state.verified = Scorer.of(mapped.postings), mapped.checked
        return state.scorer
    rows, total = recorded_size(key)
    if rows <= 0 or state.spent < total * _SECONDS_PER_TOKEN:
        return None
    state.spent = 0.0
    postings = read_postings(conn, table)
    if postings.key != key:
        return None
    state.scorer, state.verified = Scorer.of(postings), False
    return state.scorer


#: Weight sets ``check_postings`` scores with: the search's defaults, and a set whose sums
#: round (the one-at-a-time path of ``_frequency``).
_CHECK_WEIGHTS: tuple[Weights, ...] = ((2.0, 1.0, 1.0), (1.0, 0.1, 0.7))
#: Words an update's check scores (``check_postings``).
_CHECKED_CHANGES = 8


def check_postings(
    conn: Connection, postings: Postings, among: Sequence[str] | None = None
) -> bool:
    """Whether a few ORs of the table's words, scored from ``postings``, equal ``bm25()``'s
    lists and floats bit for bit (the first-query check of ``ranked``, made once by the
    writer of the postings file): the most common words, some of middling and rare ones;
    or, ``among`` given (the words an update touched, the arithmetic checked before), the
    rarest of those (the table's rarest if none), whose rows SQL scores in milliseconds where
    common words cost seconds at 50,000 chunks."""
    by_count = np.argsort(np.diff(postings.start), kind="stable")[::-1]
    names = {index: term for term, index in postings.terms.items()}
    picks = [*by_count[:6], *by_count[len(by_count) // 2 :][:4], *by_count[-4:]]
    if among is not None:
        picks = [*by_count[-4:]] if not among else []
    words = [names[int(i)] for i in dict.fromkeys(picks)]
    words += sorted(among or (), key=lambda w: len(postings.term(w)[0]))[:_CHECKED_CHANGES]
    words = [w for w in words if tokens(w, PORTER) == (w,) and '"' not in w]
    if not words:
        return False
    scorer = Scorer.of(postings)
    match = " OR ".join(f'"{w}"' for w in words)
    for weights in _CHECK_WEIGHTS:
        for n in (50, postings.size + 1):
            ids, bm25 = scorer.top(words, [], weights, n)
            found = list(zip(ids.tolist(), bm25.tolist(), strict=True))
            if found != bm25_scored(conn, match, weights, n, PORTER):
                return False
    return True


def persist(conn: Connection, db_path: Path, before: postings_file.Loaded | None = None) -> bool:
    """Write the porter table's postings beside the index (``store.postings_file``), so that
    a new process serves the numpy path from its first query; whether a file is in place.
    ``before``: the file as the caller's changes began (``postings_before``)."""
    return postings_file.refresh(
        conn, db_path, PORTER, lambda p, words: check_postings(conn, p, words), before
    )


def postings_before(conn: Connection) -> postings_file.Loaded | None:
    """The porter postings of the file beside the index, if it holds the index's now: what
    ``persist`` updates after a change instead of reading every posting again."""
    return postings_file.load(conn, PORTER)


def serves(lexical: LexicalQuery, weights: Weights) -> bool:
    """Whether the numpy path can score this query (module docstring), postings aside."""
    return lexical.leg == PORTER and _served(lexical, weights) is not None


def _served(
    lexical: LexicalQuery, weights: Weights
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The query's phrases as single tokens, or None when the numpy path cannot serve it."""
    if not _weights_served(tuple(weights)):
        return None
    return _single_tokens(lexical.leg, lexical.terms.positive, lexical.terms.negative)


@lru_cache(maxsize=256)
def _weights_served(weights: Weights) -> bool:
    return len(weights) == 3 and all(math.isfinite(w) and w >= 0 for w in weights)


@lru_cache(maxsize=1024)
def _single_tokens(
    leg: LexicalTable, positive: tuple[str, ...], negative: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(positive, negative) phrases as one token each, or None when a phrase is not one
    token. Kept: an explained query is asked once per weight set of its grid (19 times)."""
    out: list[list[str]] = [[], []]
    for side, phrases in ((0, positive), (1, negative)):
        for phrase in phrases:
            cut = tokens(phrase, leg)
            if len(cut) != 1:
                return None
            out[side].append(cut[0])
    return tuple(out[0]), tuple(out[1])
