"""A copy of the index's vectors beside it (``<db>.vectors``), for an exact, fast vector leg.

sqlite-vec 0.1.9 answers the vector leg by brute force, one scalar distance at a time (16
ms at 50,000 chunks, 130 ms at 200,000). The same answer comes from one float32 matrix
product in numpy (``groove.store.knn``) over the vectors laid out in a file that is
memory-mapped, so that a one-shot ``groove search`` pays no read of the whole table.

The file, written by ``groove index`` (``refresh``) through ``groove.atomic``:

    4096 bytes   header: a magic line, then JSON (format, token, dim, count, the sqlite-vec
                 version, the largest row norm, where each section starts)
    matrix       float32 (count, dim): the vectors in sqlite-vec's scan order (vec0 chunk id
                 ascending, slot descending), which is its order for equal distances
    ids          int64 (count,): each row's chunk id
    sqnorms      float32 (count,): each row's squared norm
    by_id        int64 (count,): the rows ordered by chunk id (for lookups by id)

When it may be used. ``index_meta`` holds a random ``vectors_token``; triggers on ``chunks``
delete it whenever a chunk row is inserted, deleted or updated (any writer, an older groove
included, fires them), and chunk ids are never reused, while vectors change only with their
chunk rows. ``refresh`` sets a new token and reads the vectors in one write transaction,
and the file records that token. So a copy whose token equals the index's (read in the
caller's transaction) holds exactly the vectors that transaction sees; anything else (no
token, no file, another token, another sqlite-vec version, a build of sqlite-vec whose
arithmetic differs, checked on stored rows) makes the callers use the SQL path. The
triggers are created by ``refresh``, not by a numbered migration, so an index stays readable
by a groove that predates them.
"""

from __future__ import annotations

import itertools
import mmap
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from groove.store.beside import (
    HEADER_BYTES,
    HeaderTooLong,
    Kind,
    Opened,
    db_file,
    map_file,
    meta_token,
)
from groove.store.knn import exact_distances, top_k
from groove.store.schema import has_vector_table
from groove.store.sqlite import Connection, Error

COPY_SUFFIX = ".vectors"
KEY_VECTORS_TOKEN = "vectors_token"
#: sqlite-vec versions whose distance arithmetic and tie order groove.store.knn reproduces
#: (checked by tests/test_vector_copy.py); any other runs the SQL path.
VERIFIED_SQLITE_VEC = frozenset({"v0.1.9"})
KIND = Kind(COPY_SUFFIX, b"groove vector copy\n", format=1, token_key=KEY_VECTORS_TOKEN)
K_MAX = 4096  # sqlite-vec refuses a larger k; such calls keep the SQL path and its error


@dataclass(frozen=True, eq=False, repr=False)
class VectorCopy:
    """The vectors of one index state, memory-mapped (see the module docstring)."""

    token: str
    ids: np.ndarray  # int64, one per row, rows in sqlite-vec's scan order
    matrix: np.ndarray  # float32 (rows, dim)
    sqnorms: np.ndarray  # float32
    by_id: np.ndarray  # int64: row indexes in chunk-id order
    max_norm: float

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def __repr__(self) -> str:
        return f"VectorCopy({len(self.ids)} x {self.dim}, token {self.token})"

    def nearest(self, vector: np.ndarray, k: int) -> tuple[list[int], list[float]]:
        """sqlite-vec's ``k`` nearest chunks: ids and float32 L2 distances, nearest first."""
        query = np.ascontiguousarray(vector, dtype=np.float32)
        rows, distances = top_k(self.matrix, self.sqnorms, self.max_norm, query, k)
        return self.ids[rows].tolist(), distances.astype(np.float64).tolist()

    def rows_of(self, chunk_ids: np.ndarray) -> np.ndarray:
        """Row index of each chunk id, -1 where the copy has no such chunk."""
        if not len(self.ids):
            return np.full(len(chunk_ids), -1, dtype=np.int64)
        sorted_ids = self.ids[self.by_id]
        at = np.minimum(np.searchsorted(sorted_ids, chunk_ids), len(sorted_ids) - 1)
        return np.where(sorted_ids[at] == chunk_ids, self.by_id[at], -1)


def copy_path(db_path: Path) -> Path:
    return KIND.path(db_path)


# ---------------------------------------------------------------- reading


_OPENED: Opened[VectorCopy] = Opened()
_SQL_ONLY = [False]


@contextmanager
def sql_only() -> Iterator[None]:
    """Within: every caller reads sqlite-vec (the plain path), for tests and benchmarks that
    compare the two paths. Process-wide; not for concurrent use."""
    _SQL_ONLY[0] = True
    try:
        yield
    finally:
        _SQL_ONLY[0] = False


def forget_open_copies() -> None:
    """Drop the copies this process has open (the next call looks at the files again, as a
    new process would). A copy stays valid while open: groove replaces the file, never
    rewrites it in place, so a mapping keeps the state its token names."""
    _OPENED.clear()


def current(conn: Connection) -> VectorCopy | None:
    """The copy that holds exactly the vectors ``conn`` sees now, or None (use SQL)."""
    if _SQL_ONLY[0]:
        return None
    token = meta_token(conn, KEY_VECTORS_TOKEN)
    if token is None:
        return None
    db = db_file(conn)
    if not db:
        return None
    path = copy_path(Path(db))
    return _OPENED.lookup((db, token, ""), path, lambda: _open(conn, path, token))


def nearest(conn: Connection, vector: np.ndarray, k: int) -> tuple[list[int], list[float]] | None:
    """The fast vector leg: ``(ids, distances)`` equal to sqlite-vec's, or None when the
    copy cannot answer (no valid copy, a ``k`` or a vector sqlite-vec would refuse)."""
    if not 0 <= k <= K_MAX:
        return None
    copy = current(conn)
    if copy is None:
        return None
    query = np.asarray(vector)
    if query.shape != (copy.dim,) or not np.all(np.isfinite(query)):
        return None
    ready = _BATCHES.get(copy.token, {}).get(query.astype(np.float32).tobytes())
    if ready is not None and (k <= len(ready[0]) or len(ready[0]) == len(copy.ids)):
        # a top-k is a prefix of a deeper top list: the order is total (distance, row)
        return ready[0][:k].tolist(), ready[1][:k].astype(np.float64).tolist()
    return copy.nearest(query, k)


_BATCHES: dict[str, dict[bytes, tuple[np.ndarray, np.ndarray]]] = {}
BATCH_ROWS = 64  # queries per matrix product: (rows x 64) float32 scores stay small
#: Below this many stored vectors a batch does not pay (measured: at 1,400 one product per
#: query took 0.23 ms of CPU, the batched products 0.66; at 50,000, 3.8 against 1.1 ms).
BATCH_MIN_VECTORS = 10_000


@contextmanager
def batch(
    conn: Connection, vectors: np.ndarray, k: int, min_vectors: int = BATCH_MIN_VECTORS
) -> Iterator[None]:
    """Within: the vector legs of these query ``vectors``, up to ``k`` deep, are read from
    products of the copy with many queries at once (an eval's golden set) instead of one
    product per query, on an index of at least ``min_vectors`` vectors. Same answers;
    deeper or other queries are computed as usual."""
    copy = current(conn)
    queries = np.ascontiguousarray(vectors, dtype=np.float32)
    usable = (
        copy is not None
        and len(copy.ids) >= min_vectors
        and 0 < k <= K_MAX
        and queries.ndim == 2
        and queries.shape[1] == copy.dim
        and bool(np.all(np.isfinite(queries)))
    )
    if copy is None or not usable or copy.token in _BATCHES:
        yield
        return
    found: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
    for start in range(0, len(queries), BATCH_ROWS):
        block = queries[start : start + BATCH_ROWS]
        scores = block @ copy.matrix.T  # (queries, rows): each query's row is contiguous
        for query, row_scores in zip(block, scores, strict=True):
            rows, distances = top_k(copy.matrix, copy.sqnorms, copy.max_norm, query, k, row_scores)
            found[query.tobytes()] = (copy.ids[rows], distances)
    _BATCHES[copy.token] = found
    try:
        yield
    finally:
        _BATCHES.pop(copy.token, None)


def vectors_of(conn: Connection, chunk_ids: list[int], dim: int) -> np.ndarray | None:
    """Stored vectors of ``chunk_ids`` (zeros for ids not in the index), or None."""
    copy = current(conn)
    if copy is None or copy.dim != dim:
        return None
    rows = copy.rows_of(np.asarray(chunk_ids, dtype=np.int64))
    out = np.zeros((len(chunk_ids), dim), dtype=np.float32)
    present = rows >= 0
    out[present] = copy.matrix[rows[present]]
    return out


def _sqlite_vec_version(conn: Connection) -> str:
    return str(conn.execute("SELECT vec_version()").fetchone()[0])


def _open(conn: Connection, path: Path, token: str) -> VectorCopy | None:
    mapped = map_file(path)
    if mapped is None:
        return None
    header = KIND.header(mapped[:HEADER_BYTES])
    version = _sqlite_vec_version(conn)
    if (
        header is None
        or header.get("token") != token
        or header.get("sqlite_vec") != version
        or version not in VERIFIED_SQLITE_VEC
    ):
        return None
    try:
        copy = _views(mapped, header, token)
    except (KeyError, TypeError, ValueError):
        return None
    return copy if _same_arithmetic(conn, copy) else None


def _views(mapped: mmap.mmap, header: dict[str, object], token: str) -> VectorCopy:
    count, dim = int(header["count"]), int(header["dim"])  # type: ignore[call-overload]
    sections = header["sections"]
    if not isinstance(sections, dict):
        raise ValueError("sections")

    def section(name: str, dtype: type, shape: tuple[int, ...]) -> np.ndarray:
        offset = int(sections[name])
        items = int(np.prod(shape))
        array: np.ndarray = np.frombuffer(mapped, dtype=dtype, count=items, offset=offset)
        return array.reshape(shape)

    return VectorCopy(
        token=token,
        ids=section("ids", np.int64, (count,)),
        matrix=section("matrix", np.float32, (count, dim)),
        sqnorms=section("sqnorms", np.float32, (count,)),
        by_id=section("by_id", np.int64, (count,)),
        max_norm=float(header["max_norm"]),  # type: ignore[arg-type]
    )


def _same_arithmetic(conn: Connection, copy: VectorCopy) -> bool:
    """sqlite-vec's own distance of a few stored rows equals knn's, bit for bit (a build of
    sqlite-vec with SIMD sums would differ: then the SQL path is used)."""
    n = len(copy.ids)
    picks = sorted({0, n // 3, (2 * n) // 3, n - 1}) if n > 1 else []
    for a, b in itertools.pairwise(picks):
        row_a, row_b = copy.matrix[a], copy.matrix[b]
        (sql,) = conn.execute(
            "SELECT vec_distance_l2(?, ?)", (row_a.tobytes(), row_b.tobytes())
        ).fetchone()
        mine = float(exact_distances(row_a.reshape(1, -1), row_b)[0])
        if sql != mine:
            return False
    return True


# ---------------------------------------------------------------- writing


class _Unexpected(Exception):
    """vec0's storage is not laid out as this module reads it: write no copy."""


def refresh(conn: Connection, db_path: Path) -> bool:
    """Make ``<db>.vectors`` hold the index's vectors, unless it already does; returns
    whether a valid copy is in place. For ``groove index``, under its build lock.

    OSError (a full disk, a read-only folder) propagates; the index itself is untouched.
    """
    path = KIND.writer_path(conn, db_path)
    version = _sqlite_vec_version(conn)
    if not has_vector_table(conn) or version not in VERIFIED_SQLITE_VEC:
        path.unlink(missing_ok=True)
        return False
    # under the write lock: the vectors cannot change while being read
    return KIND.refresh(conn, path, lambda token: _write(conn, path, version, token()))


def _write(conn: Connection, path: Path, version: str, token: str) -> bool:
    from groove.atomic import write_stream  # the writers' module: not a reader's

    try:
        write_stream(path, lambda handle: _export(conn, handle, token, version))
    except (_Unexpected, HeaderTooLong, Error):
        path.unlink(missing_ok=True)
        return False
    return True


def _export(conn: Connection, handle: BinaryIO, token: str, version: str) -> None:
    """Write the copy: vec0's chunks in id order, each chunk's valid slots from the last."""
    count = int(conn.execute("SELECT count(*) FROM vec_chunks_rowids").fetchone()[0])
    if count != int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0]):
        raise _Unexpected("vectors and chunks differ in number")
    found = conn.execute(
        "SELECT c.chunk_id, c.validity, c.rowids, v.vectors FROM vec_chunks_chunks c "
        "JOIN vec_chunks_vector_chunks00 v ON v.rowid = c.chunk_id ORDER BY c.chunk_id"
    )
    handle.write(b"\0" * HEADER_BYTES)  # the header goes last, once its numbers are known
    ids: list[np.ndarray] = []
    sqnorms: list[np.ndarray] = []
    dim = 0
    for _, validity, rowids, vectors in found:
        slots = len(validity) * 8
        valid = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")
        if len(rowids) != slots * 8 or len(vectors) % (slots * 4):
            raise _Unexpected("a vec0 chunk of unexpected size")
        dim = dim or len(vectors) // (slots * 4)
        matrix = np.frombuffer(vectors, np.float32).reshape(slots, -1)
        taken = np.flatnonzero(valid)[::-1]  # sqlite-vec prefers the later slot on a tie
        rows = matrix[taken]
        if rows.shape[1] != dim or not np.all(np.isfinite(rows)):
            raise _Unexpected("a vec0 chunk of another width, or a non-finite vector")
        chunk_ids = np.frombuffer(rowids, np.int64)[taken]
        if len(taken):
            _spot_check(conn, int(chunk_ids[0]), rows[0])
        handle.write(np.ascontiguousarray(rows).tobytes())
        ids.append(chunk_ids)
        wide = rows.astype(np.float64)
        sqnorms.append(np.einsum("ij,ij->i", wide, wide))
    all_ids = np.concatenate(ids) if ids else np.zeros(0, np.int64)
    norms = np.concatenate(sqnorms) if sqnorms else np.zeros(0, np.float64)
    if len(all_ids) != count:
        raise _Unexpected("the validity maps and the rowid table disagree")
    sections: dict[str, int] = {"matrix": HEADER_BYTES}
    for name, array in (
        ("ids", all_ids.astype(np.int64)),
        ("sqnorms", norms.astype(np.float32)),
        ("by_id", np.argsort(all_ids, kind="stable").astype(np.int64)),
    ):
        handle.write(b"\0" * (-handle.tell() % 64))  # each section 64-byte aligned
        sections[name] = handle.tell()
        handle.write(array.tobytes())
    max_norm = float(np.sqrt(norms.max())) * (1 + 1e-6) if len(norms) else 0.0
    header = {
        "format": KIND.format,
        "token": token,
        "dim": dim,
        "count": count,
        "sqlite_vec": version,
        "max_norm": max_norm,
        "sections": sections,
    }
    KIND.write_header(handle, header)


def _spot_check(conn: Connection, chunk_id: int, row: np.ndarray) -> None:
    """A row as the copy holds it equals vec0's own answer for its id (one per vec0 chunk)."""
    found = conn.execute(
        "SELECT embedding FROM vec_chunks WHERE chunk_id = ?", (chunk_id,)
    ).fetchone()
    if found is None or bytes(found[0]) != row.tobytes():
        raise _Unexpected("a row of the copy differs from vec0's")
