"""Where chunks stand in each search leg over the whole index, for ``groove eval --explain``.

The search fetches a candidate pool from each leg; to say why an answer missed, eval needs
the rank its chunks would have had with no pool at all ("FTS rank 212 of 1,388 matches").
The orders here are the legs' own orders, not capped:

* FTS: every row matching the expression in the table the query was routed to (trigram or
  porter), by ``bm25(table, h, ctx, content)`` then
  rowid, exactly the ``ORDER BY`` of the FTS leg;
* vector: every stored vector by L2 distance to the query vector (the metric of the vec0
  KNN), ties to the lower chunk id, chunks a ``-term`` excluded left out as the vector leg
  leaves them out. The distances are computed in numpy over the vector copy beside the
  index (``store.vector_copy``, memory-mapped) when it is valid, else over one read of the
  vectors; a chunk's place is counted from them when it is looked up.

The SQL is self-contained on purpose: the search module's statements may move without
this file changing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from groove.store import knn, vector_copy
from groove.store.legs import TRIGRAM, LexicalTable
from groove.store.schema import FTS_TABLES
from groove.store.sqlite import Connection


@dataclass(frozen=True)
class ChunkHeading:
    chunk_id: int
    heading: str | None


def indexed_paths(conn: Connection) -> frozenset[str]:
    """Every document path in the index."""
    return frozenset(path for (path,) in conn.execute("SELECT path FROM documents"))


def document_headings(conn: Connection, path: str) -> list[ChunkHeading]:
    """The chunks of the document at ``path`` (chunk order), with their headings."""
    rows = conn.execute(
        "SELECT c.id, c.heading FROM chunks c JOIN documents d ON d.id = c.document_id "
        "WHERE d.path = ? ORDER BY c.chunk_index",
        (path,),
    ).fetchall()
    return [ChunkHeading(int(chunk_id), heading) for chunk_id, heading in rows]


def fts_scores(
    conn: Connection,
    match: str | None,
    weight_sets: Sequence[tuple[float, float, float]],
    only: Sequence[int] | None = None,
    table: LexicalTable = TRIGRAM,
) -> tuple[np.ndarray, np.ndarray]:
    """(ids, scores) of the chunks matching ``match``: ``scores[i, w]`` is chunk ``ids[i]``'s
    ``bm25()`` under ``weight_sets[w]`` (lower is better), in one pass over the matches.

    ``only`` keeps the listed chunk ids. It filters after the match (``+rowid``) so that
    FTS5 runs the expression once, not once per id."""
    width = len(weight_sets)
    name = FTS_TABLES[table]
    if match is None or (only is not None and not len(only)):
        return np.zeros(0, dtype=np.int64), np.zeros((0, width))
    columns = ", ".join(f"bm25({name}, {h!r}, {c!r}, {b!r})" for h, c, b in weight_sets)
    sql = f"SELECT rowid, {columns} FROM {name} WHERE {name} MATCH ?"
    params: list[object] = [match]
    if only is not None:
        sql += f" AND +rowid IN ({','.join('?' * len(only))})"
        params += [int(i) for i in only]
    found = conn.execute(sql, params).fetchall()
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros((0, width))
    data = np.array(found, dtype=np.float64)
    return data[:, 0].astype(np.int64), data[:, 1:]


def matching(
    conn: Connection, match: str, chunk_ids: Iterable[int], table: LexicalTable = TRIGRAM
) -> frozenset[int]:
    """Which of ``chunk_ids`` match the FTS expression ``match`` in ``table``."""
    wanted = sorted(set(chunk_ids))
    if not wanted:
        return frozenset()
    marks = ",".join("?" * len(wanted))
    found = conn.execute(
        f"SELECT rowid FROM {FTS_TABLES[table]} WHERE {FTS_TABLES[table]} MATCH ? "
        f"AND rowid IN ({marks})",
        (match, *wanted),
    ).fetchall()
    return frozenset(chunk_id for (chunk_id,) in found)


#: Rows whose distances are computed at a time: bounds the temporary (rows x dim) array.
_DISTANCE_BLOCK = 8192


def l2_distances(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """float32 L2 distance of each row of ``matrix`` to ``vector``, a block of rows at a
    time (each row's sum is its own, so the blocks do not change a single bit)."""
    query = np.asarray(vector, dtype=np.float32).reshape(1, -1)
    out = np.empty(len(matrix), dtype=np.float32)
    for lo in range(0, len(matrix), _DISTANCE_BLOCK):
        squares = np.subtract(matrix[lo : lo + _DISTANCE_BLOCK], query)
        np.square(squares, out=squares)
        out[lo : lo + len(squares)] = np.sqrt(np.sum(squares, axis=1, dtype=np.float32))
    return out


#: Key comparisons made at once when places are looked up in a block (bounds the memory).
_COMPARED_AT_ONCE = 4_000_000


class VectorPlaces(Mapping[int, int]):
    """Each chunk's place in the vector order over every stored vector (nearest first,
    ties to the lower id, excluded chunks left out), found when it is looked up.

    The count reads an ordering key per chunk (``near``): the distance itself, or a cheap
    approximation never more than ``margin`` off the order of the distances (the vector
    copy's ``|x|^2 - 2 x.q``, with ``store.knn``'s bound). Chunks whose key is more than
    ``margin`` below the looked-up chunk's are certainly nearer; only those within
    ``margin`` of it get their exact distance (``exact``: positions -> float32), so no query
    computes every distance for the few answers an explain looks up.
    """

    def __init__(
        self,
        ids: np.ndarray,
        near: np.ndarray,
        margin: float,
        exact: Callable[[np.ndarray], np.ndarray],
        kept: np.ndarray,
    ) -> None:
        self._ids = ids  # int64, ascending
        self._near = np.where(kept, near, np.inf)  # float64, aligned; excluded: never ahead
        self._margin = margin
        self._exact = exact
        self._kept = kept  # bool, aligned: not excluded
        self._size = int(np.count_nonzero(kept))
        self._known: dict[int, int] = {}  # places found so far (0: not a kept chunk)

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, chunk_id: int) -> int:
        place = self._known.get(chunk_id)
        if place is None:
            self.prefetch([chunk_id])
            place = self._known[chunk_id]
        if not place:
            raise KeyError(chunk_id)
        return place

    def prefetch(self, chunk_ids: Sequence[int]) -> None:
        """Find the places of these chunks at once (an explain's answers): one pass over
        the keys per block of chunks instead of one per chunk."""
        wanted = np.unique(np.asarray(chunk_ids, dtype=np.int64))
        wanted = wanted[[int(c) not in self._known for c in wanted.tolist()]]
        block = max(1, _COMPARED_AT_ONCE // max(len(self._ids), 1))
        for lo in range(0, len(wanted), block):
            part = wanted[lo : lo + block]
            self._known.update(zip(part.tolist(), self._places(part).tolist(), strict=True))

    def _places(self, chunk_ids: np.ndarray) -> np.ndarray:
        """The place of each of ``chunk_ids`` (ascending), 0 for one not kept or absent."""
        at = np.minimum(np.searchsorted(self._ids, chunk_ids), max(len(self._ids) - 1, 0))
        places = np.zeros(len(chunk_ids), dtype=np.int64)
        if not len(self._ids):
            return places
        (mine,) = np.nonzero((self._ids[at] == chunk_ids) & self._kept[at])
        at, keys = at[mine], self._near[at[mine]][:, None]
        sure = np.count_nonzero(self._near < keys - self._margin, axis=1)
        # each chunk's close ones: within the margin of its key, the chunk itself included
        which, close = np.nonzero(np.abs(self._near - keys) <= self._margin)
        rows, slot = np.unique(np.concatenate([close, at]), return_inverse=True)
        d = self._exact(rows)
        mine_d, their_d = d[slot[len(close) :]][which], d[slot[: len(close)]]
        ahead = (their_d < mine_d) | ((their_d == mine_d) & (close < at[which]))
        places[mine] = 1 + sure + np.bincount(which, weights=ahead, minlength=len(at)).astype(int)
        return places

    def __iter__(self) -> Iterator[int]:
        """The chunk ids in vector order."""
        distances = self._exact(np.arange(len(self._ids)))
        order = np.argsort(distances, kind="stable")  # ids ascend: ties to the lower
        yield from self._ids[order][self._kept[order]].tolist()


def _kept(ids: np.ndarray, exclude: frozenset[int]) -> np.ndarray:
    kept = np.ones(len(ids), dtype=bool)
    if exclude:
        kept &= ~np.isin(ids, np.fromiter(exclude, dtype=np.int64))
    return kept


def _places(ids: np.ndarray, distances: np.ndarray, exclude: frozenset[int]) -> VectorPlaces:
    """Places counted over the distances themselves."""
    near = distances.astype(np.float64)
    return VectorPlaces(ids, near, 0.0, lambda at: distances[at], _kept(ids, exclude))


@dataclass(frozen=True)
class StoredVectors:
    """Every stored chunk vector, read once and reused for each query's vector order."""

    ids: np.ndarray  # int64, ascending
    matrix: np.ndarray  # float32, one row per id

    def places(self, vector: np.ndarray, exclude: frozenset[int] = frozenset()) -> VectorPlaces:
        """Where each chunk stands by L2 distance to ``vector``, without ``exclude``."""
        return _places(self.ids, l2_distances(self.matrix, vector), exclude)


@dataclass(frozen=True)
class CopiedVectors:
    """The same, over the index's vector copy (``store.vector_copy``), memory-mapped: no read
    of the vectors and no copy of them in this process."""

    copy: vector_copy.VectorCopy

    def places(self, vector: np.ndarray, exclude: frozenset[int] = frozenset()) -> VectorPlaces:
        """As ``StoredVectors.places``, the same places; the order is counted over one
        matrix-vector product, and exact distances are computed only where it is too close
        to call (``VectorPlaces``)."""
        copy, by_id = self.copy, self.copy.by_id
        query = np.ascontiguousarray(vector, dtype=np.float32)
        # knn.top_k's approximation of d^2 - |q|^2 (einsum: see there), in chunk-id order
        near = (copy.sqnorms - 2.0 * np.einsum("ij,j->i", copy.matrix, query))[by_id]
        near = near.astype(np.float64)
        margin = 0.0
        if len(near):
            query_norm = float(np.sqrt(np.dot(query.astype(np.float64), query.astype(np.float64))))
            # the bound at the largest key holds for every chunk's (knn.candidate_margin)
            widest = float(np.max(np.abs(near)))
            margin = knn.candidate_margin(copy.dim, copy.max_norm, query_norm, widest)

        def exact(at: np.ndarray) -> np.ndarray:
            # l2_distances' arithmetic, row by row (a few rows: no blocks)
            squares = copy.matrix[by_id[at]] - query
            return np.sqrt(np.sum(squares * squares, axis=1, dtype=np.float32))

        return VectorPlaces(copy.ids[by_id], near, margin, exact, _kept(copy.ids[by_id], exclude))


def stored_vectors(conn: Connection, dim: int) -> StoredVectors | CopiedVectors:
    """The vectors ``conn`` sees: the vector copy when it holds exactly them, else read."""
    copy = vector_copy.current(conn)
    if copy is not None and copy.dim == dim:
        return CopiedVectors(copy)
    return read_vectors(conn, dim)


def read_vectors(conn: Connection, dim: int) -> StoredVectors:
    rows = conn.execute("SELECT chunk_id, embedding FROM vec_chunks ORDER BY chunk_id").fetchall()
    ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    matrix = np.zeros((len(rows), dim), dtype=np.float32)
    for i, (_, blob) in enumerate(rows):
        matrix[i] = np.frombuffer(blob, dtype=np.float32)
    return StoredVectors(ids, matrix)
