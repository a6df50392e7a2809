"""The fast vector leg (``store.vector_copy`` + ``store.knn``) returns what sqlite-vec returns.

Equality checked everywhere: the same chunk ids in the same order, and each distance equal
to sqlite-vec's as a float (bit for bit: both are the same float32 widened to a double).
Real SQLite + sqlite-vec throughout; vectors come from a seeded generator (with exact
duplicates and one-ulp neighbours to exercise ties and near-ties), the deterministic
HashingEmbedder, or the real model (the integration tests at the end).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.hashing import HashingEmbedder

from groove.engine.chunking import parse_markdown
from groove.engine.index import build
from groove.engine.search import SearchOptions, search, vector_leg
from groove.store import chunks as rows
from groove.store import vector_copy
from groove.store.beside import Opened
from groove.store.db import connect, transaction
from groove.store.knn import exact_distances
from groove.store.leg_scores import nearest_scored, nearest_scored_sql
from groove.store.legs import nearest_chunks, nearest_chunks_sql
from groove.store.schema import create_vector_table
from groove.store.sqlite import Connection

DIM = 24
KS = (1, 7, 50, 333, 4096)


def _write_docs(conn: Connection, vectors: np.ndarray, first_doc: int = 0) -> list[int]:
    """One document per 4 vectors, written through the store like an index build."""
    ids: list[int] = []
    with transaction(conn):
        create_vector_table(conn, vectors.shape[1])
        for d, start in enumerate(range(0, len(vectors), 4)):
            part = vectors[start : start + 4]
            body = " ".join(f"w{d}x{j}" for j in range(90))  # long enough to stay a chunk
            text = "\n\n".join(f"## s{i}\n\n{body} {i}" for i in range(len(part)))
            parsed = parse_markdown(text, f"d/{first_doc + d}.md")
            assert len(parsed.chunks) == len(part)
            doc = rows.insert_document(
                conn, f"d/{first_doc + d}.md", parsed, "h", 0, "t", part, False
            )
            ids += [c.id for c in rows.document_chunks(conn, doc)]
    return ids


def _vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    """Unit rows with exact duplicates (ties) and one-ulp neighbours (near-ties)."""
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    base = v[3].copy()
    for i in (10, 500, 1023, 1024, 1500, 2047, 2500):  # across three vec0 chunks of 1024
        v[i] = base
    for i in (11, 1030, 2400):
        v[i] = base
        v[i, 5] = np.nextafter(base[5], np.float32(2))
    return v


def _queries(rng: np.random.Generator, vectors: np.ndarray) -> list[np.ndarray]:
    found = [vectors[3], vectors[11], vectors[700]]  # at a stored row: distance-0 ties
    noisy = vectors[3] + np.float32(1e-4) * rng.standard_normal(DIM).astype(np.float32)
    found.append(noisy.astype(np.float32))
    for _ in range(12):
        q = rng.standard_normal(DIM).astype(np.float32)
        found.append(q / np.linalg.norm(q))
    found.append(np.float32(3.0) * found[-1])  # a query that is not of unit length
    return found


def _assert_same_as_sqlite_vec(conn: Connection, queries: list[np.ndarray]) -> None:
    assert vector_copy.current(conn) is not None, "the fast path must be the one tested"
    for q in queries:
        for k in KS:
            fast = nearest_scored(conn, q, k)
            plain = nearest_scored_sql(conn, q, k)
            assert fast == plain, (k, fast[:4], plain[:4])
            assert nearest_chunks(conn, q, k) == nearest_chunks_sql(conn, q, k)


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Connection, Path, np.ndarray, list[int]]:
    db = tmp_path / ".groove.db"
    conn = connect(db)
    vectors = _vectors(np.random.default_rng(5), 2600)
    ids = _write_docs(conn, vectors)
    assert vector_copy.refresh(conn, db)
    return conn, db, vectors, ids


def test_the_fast_leg_equals_sqlite_vec_ids_order_and_distances(
    stored: tuple[Connection, Path, np.ndarray, list[int]],
) -> None:
    conn, _, vectors, _ = stored
    queries = _queries(np.random.default_rng(6), vectors)
    _assert_same_as_sqlite_vec(conn, queries)
    # the ties are real: seven stored rows at distance 0 from vectors[3], ranked as vec0 does
    tied = nearest_scored_sql(conn, vectors[3], 8)
    assert [d for _, d in tied][:8] == [0.0] * 8


def test_distances_are_sqlite_vec_arithmetic_bit_for_bit(
    stored: tuple[Connection, Path, np.ndarray, list[int]],
) -> None:
    conn, _, vectors, _ = stored
    rng = np.random.default_rng(8)
    for _ in range(50):
        a, b = vectors[rng.integers(len(vectors))], vectors[rng.integers(len(vectors))]
        (sql,) = conn.execute("SELECT vec_distance_l2(?, ?)", (a.tobytes(), b.tobytes())).fetchone()
        assert float(exact_distances(a.reshape(1, -1), b)[0]) == sql


def test_deleted_and_reinserted_rows_keep_the_fast_leg_exact(
    stored: tuple[Connection, Path, np.ndarray, list[int]],
) -> None:
    conn, db, vectors, _ = stored
    with transaction(conn):
        for doc in (0, 130, 255, 300, 649):  # frees slots in every vec0 chunk
            rows.delete_document(conn, doc + 1)
    assert vector_copy.current(conn) is None  # the triggers dropped the token: SQL path
    assert nearest_chunks(conn, vectors[3], 9) == nearest_chunks_sql(conn, vectors[3], 9)
    again = np.random.default_rng(9).standard_normal((40, DIM)).astype(np.float32)
    _write_docs(conn, np.concatenate([again, vectors[3:4].repeat(4, axis=0)]), first_doc=900)
    assert vector_copy.refresh(conn, db)
    _assert_same_as_sqlite_vec(conn, _queries(np.random.default_rng(10), vectors))


def _replace(path: Path, data: bytes) -> None:
    """Put ``data`` at ``path`` as groove does: a new file renamed over the old one."""
    tmp = path.with_name(path.name + ".new")
    tmp.write_bytes(data)
    tmp.replace(path)


def test_a_stale_missing_or_foreign_copy_is_never_used(
    stored: tuple[Connection, Path, np.ndarray, list[int]], tmp_path: Path
) -> None:
    conn, db, vectors, _ = stored
    path = vector_copy.copy_path(db)
    saved = path.read_bytes()
    assert vector_copy.current(conn) is not None
    path.unlink()
    # a copy open in this process stays valid: it maps the file of the state its token names
    assert vector_copy.current(conn) is not None
    vector_copy.forget_open_copies()  # as in a new process
    assert vector_copy.current(conn) is None
    _replace(path, saved)
    assert vector_copy.current(conn) is not None
    # another index's copy (its own token) put in its place
    other_db = tmp_path / "other.db"
    other = connect(other_db)
    _write_docs(other, vectors[:100])
    assert vector_copy.refresh(other, other_db)
    _replace(path, vector_copy.copy_path(other_db).read_bytes())
    vector_copy.forget_open_copies()
    assert vector_copy.current(conn) is None
    assert nearest_chunks(conn, vectors[3], 5) == nearest_chunks_sql(conn, vectors[3], 5)
    for broken in (saved[:5000], saved[:100], b"", saved.replace(b'"format": 1', b'"format": 7')):
        _replace(path, broken)
        vector_copy.forget_open_copies()
        assert vector_copy.current(conn) is None
    _replace(path, saved)
    assert vector_copy.current(conn) is not None
    # one changed chunk row (any writer, through the triggers) makes it stale at once
    with transaction(conn):
        conn.execute("UPDATE chunks SET heading = 'x' WHERE id = (SELECT min(id) FROM chunks)")
    assert vector_copy.current(conn) is None
    assert vector_copy.refresh(conn, db)  # and the next refresh writes a new one
    assert vector_copy.current(conn) is not None
    other.close()


def test_an_unverified_sqlite_vec_keeps_the_sql_path(
    stored: tuple[Connection, Path, np.ndarray, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, db, _, _ = stored
    monkeypatch.setattr(vector_copy, "VERIFIED_SQLITE_VEC", frozenset({"v9.9.9"}))
    monkeypatch.setattr(vector_copy, "_OPENED", Opened())
    assert vector_copy.current(conn) is None
    assert not vector_copy.refresh(conn, db)
    assert not vector_copy.copy_path(db).exists()


def test_an_odd_k_or_vector_takes_the_sql_path_and_its_answer(
    stored: tuple[Connection, Path, np.ndarray, list[int]],
) -> None:
    conn, _, vectors, _ = stored
    assert vector_copy.nearest(conn, vectors[0], 5000) is None  # sqlite-vec refuses k > 4096
    assert vector_copy.nearest(conn, vectors[0][:10], 5) is None  # another dimension
    assert vector_copy.nearest(conn, np.full(DIM, np.nan, np.float32), 5) is None
    assert nearest_chunks(conn, vectors[0], 0) == [] == nearest_chunks_sql(conn, vectors[0], 0)


def test_a_batch_of_queries_answers_what_each_query_alone_answers(
    stored: tuple[Connection, Path, np.ndarray, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, _, vectors, _ = stored
    queries = np.stack(_queries(np.random.default_rng(11), vectors) * 5)  # > one product block
    alone = vector_copy.VectorCopy.nearest

    def refused(*args: object) -> None:
        raise AssertionError("a batched query was computed alone")

    with vector_copy.batch(conn, queries, 60, min_vectors=1000):  # the test index has 2,600
        monkeypatch.setattr(vector_copy.VectorCopy, "nearest", refused)
        for q in queries:
            for k in (1, 60):
                assert nearest_scored(conn, q, k) == nearest_scored_sql(conn, q, k)
        monkeypatch.setattr(vector_copy.VectorCopy, "nearest", alone)
        for q in queries[:10]:
            for k in (61, 4096):  # deeper than the batch: computed alone, the same answer
                assert nearest_scored(conn, q, k) == nearest_scored_sql(conn, q, k)
    with vector_copy.batch(conn, queries, 60):  # below BATCH_MIN_VECTORS: nothing batched
        monkeypatch.setattr(vector_copy.VectorCopy, "nearest", refused)
        with pytest.raises(AssertionError, match="computed alone"):
            nearest_chunks(conn, queries[0], 5)
        monkeypatch.setattr(vector_copy.VectorCopy, "nearest", alone)
    with vector_copy.sql_only(), vector_copy.batch(conn, queries, 60, min_vectors=0):
        assert nearest_chunks(conn, queries[0], 5) == nearest_chunks_sql(conn, queries[0], 5)


def test_stored_vectors_by_id_come_from_the_copy_unchanged(
    stored: tuple[Connection, Path, np.ndarray, list[int]],
) -> None:
    conn, _, _, ids = stored
    wanted = [ids[5], 10**9, ids[2000], ids[0]]
    fast = rows.chunk_embeddings(conn, wanted, DIM)
    with vector_copy.sql_only():
        plain = rows.chunk_embeddings(conn, wanted, DIM)
    assert fast.tobytes() == plain.tobytes()
    assert not fast[1].any()


def test_an_index_build_writes_the_copy_and_an_update_rewrites_it(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    words = " ".join(f"filler{j}" for j in range(80))  # sections long enough to stay chunks
    for i in range(30):
        text = f"# Note {i}\n\n## A\n\nalpha {i} {words}\n\n## B\n\nbeta {i % 3} {words}\n"
        (kb / f"n{i}.md").write_text(text)
    build(kb, HashingEmbedder())
    db = tmp_path / ".groove.db"
    conn = connect(db)
    first = vector_copy.current(conn)
    assert first is not None and len(first.ids) == rows.counts(conn)[1] == 90
    (kb / "n3.md").write_text("# Note 3\n\n## A\n\nchanged\n")  # fewer, changed chunks
    (kb / "n4.md").unlink()
    (kb / "n30.md").write_text((kb / "n7.md").read_text())  # duplicate texts: ties
    build(kb, HashingEmbedder())
    copy = vector_copy.current(conn)
    assert copy is not None and copy is not first and len(copy.ids) == rows.counts(conn)[1] == 88
    queries = [HashingEmbedder().embed([t])[0] for t in ("alpha 7", "beta 1", "changed", "zeta")]
    for q in queries:
        for k in (1, 3, 88, 200):
            assert nearest_scored(conn, q, k) == nearest_scored_sql(conn, q, k)
            assert vector_leg(conn, q, k, frozenset({2, 5})) == _plain_vector_leg(conn, q, k)


def _plain_vector_leg(conn: Connection, q: np.ndarray, k: int) -> list[int]:
    with vector_copy.sql_only():
        return vector_leg(conn, q, k, frozenset({2, 5}))


# ---------------------------------------------------------------- the real model


def test_search_with_the_real_model_is_the_same_on_both_paths_after_an_update(
    indexed_kb, real_embedder, golden_en: Path
) -> None:  # type: ignore[no-untyped-def]
    import yaml

    kb = indexed_kb("kb_en")
    queries = [q["query"] for q in yaml.safe_load(golden_en.read_text())["queries"]]
    vectors = real_embedder.embed(queries)
    db = kb.parent / ".groove.db"

    def both(conn: Connection) -> None:
        assert vector_copy.current(conn) is not None
        for query, vector in zip(queries, vectors, strict=True):
            for options in (SearchOptions(limit=5), SearchOptions(limit=40)):
                fast = search(conn, query, vector, options)
                with vector_copy.sql_only():
                    plain = search(conn, query, vector, options)
                assert fast.hits == plain.hits
            assert nearest_scored(conn, vector, 60) == nearest_scored_sql(conn, vector, 60)

    conn = connect(db)
    both(conn)
    first = sorted(kb.rglob("*.md"))
    first[0].unlink()  # a deleted file
    first[1].write_text(first[1].read_text() + "\n\n## Added\n\nA new section on retrieval.\n")
    build(kb, real_embedder)
    both(conn)
    conn.close()


def test_a_copy_that_cannot_be_written_costs_speed_not_the_index(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n\n## One\n\n" + " ".join(f"w{i}" for i in range(90)) + "\n")
    db = tmp_path / ".groove.db"
    vector_copy.copy_path(db).mkdir()  # a folder where the file would go: the rename fails
    summary = build(kb, HashingEmbedder())
    assert summary.chunks_total > 0
    assert any("searches read SQLite instead" in w for w in summary.warnings)
    conn = connect(db)
    assert vector_copy.current(conn) is None
    q = HashingEmbedder().embed(["w1 w2"])[0]
    assert nearest_chunks(conn, q, 3) == nearest_chunks_sql(conn, q, 3) != []
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
