"""``groove index`` killed with SIGKILL at many points: the index is never lost or corrupted.

Two scenarios on a generated KB of 300 notes (1,215 chunks; helpers/kbgen.py):

* build: a first ``groove index`` of the KB, from no database at all;
* update: ``groove index`` of the KB after a day of edits (30 changed, 20 deleted, 15 moved,
  10 frontmatter-only, 25 new notes) over the database of the first version.

Each run is killed either deterministically (the child SIGKILLs itself after the n-th SQLite
progress callback, evenly spread over the callbacks a complete run makes) or from outside
after a delay spread over a complete run's wall time. After every kill:

* the database opens, passes ``PRAGMA integrity_check`` and the FTS5 integrity check, and its
  chunk, FTS and vector rows name the same chunk ids;
* every document in it is whole: its row, chunks and vectors are exactly those of a clean
  build of a KB version that had that path with those bytes (a document is never half
  written, and never half old, half new);
* search works (the library and ``groove search``);
* the next ``groove index`` exits 0 and leaves exactly the index the same run leaves when
  nothing kills it (which, chunks, vectors and FTS terms included, is what a clean build of
  the same KB leaves): same documents and metadata, same chunks, same vectors, same FTS
  matches, same chunk count printed.

The children run the real click command with HashingEmbedder in place of the model (see
helpers/crash_worker.py), so each build takes a fraction of a second.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.crash_worker import Outcome, Worker
from helpers.hashing import HashingEmbedder
from helpers.kbgen import kb_v1, kb_v2, write_kb

from groove.engine.lexical import compile_porter
from groove.engine.query import compile_query
from groove.engine.session import open_engine
from groove.errors import IndexMissingError
from groove.store.db import connect
from groove.store.schema import FTS_TABLES
from groove.store.sqlite import Connection

QUERIES = ("rollback canary", "golden baseline regression", "trigram shard", "Section 12.1")
DocRow = tuple[object, ...]
ChunkRow = tuple[object, ...]


@dataclass(frozen=True)
class IndexState:
    """Everything an index holds, keyed by path so that row ids do not matter.

    ``matches`` maps each of QUERIES, on each FTS table (trigram and porter), to the chunks
    its FTS expression matches, as (path, content_hash, chunk_index): the FTS tables are
    contentless, so this is how their terms are compared with the chunks they should index.
    """

    documents: dict[str, DocRow]  # path -> (content_hash, title, topic, ..., size_bytes)
    chunks: dict[str, tuple[ChunkRow, ...]]  # path -> its chunks with their vectors, in order
    matches: dict[str, frozenset[tuple[str, str, int]]]

    @property
    def chunk_count(self) -> int:
        return sum(len(c) for c in self.chunks.values())


def _table_exists(conn: Connection, name: str) -> bool:
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    return found is not None


def _check_consistent(conn: Connection) -> None:
    """SQLite and FTS5 integrity, and one FTS row and one vector per chunk, no more."""
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    chunk_ids = {r[0] for r in conn.execute("SELECT id FROM chunks")}
    for table in FTS_TABLES.values():  # trigram and porter: one row per chunk in each
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
        assert {r[0] for r in conn.execute(f"SELECT rowid FROM {table}")} == chunk_ids, table
    vectors = set()
    if _table_exists(conn, "vec_chunks"):
        vectors = {r[0] for r in conn.execute("SELECT chunk_id FROM vec_chunks")}
    assert vectors == chunk_ids


def _matches(conn: Connection) -> dict[str, frozenset[tuple[str, str, int]]]:
    """Each query's FTS hits on each table, keyed ``"<leg>: <query>"``."""
    found = {}
    for query in QUERIES:
        compiled = {"trigram": compile_query(query), "porter": compile_porter(query)}
        for leg, table in FTS_TABLES.items():
            rows = conn.execute(
                f"SELECT d.path, d.content_hash, c.chunk_index FROM {table} f "
                "JOIN chunks c ON c.id = f.rowid JOIN documents d ON d.id = c.document_id "
                f"WHERE {table} MATCH ?",
                (compiled[leg].match,),
            )
            found[f"{leg}: {query}"] = frozenset((p, h, i) for p, h, i in rows)
    return found


def read_state(db: Path) -> IndexState:
    """Open ``db`` like groove does, check it is consistent, and read everything in it."""
    conn = connect(db)
    try:
        _check_consistent(conn)
        documents = {
            row[0]: tuple(row[1:])
            for row in conn.execute(
                "SELECT path, content_hash, title, topic, category, depth, tags, date, "
                "size_bytes FROM documents"
            )
        }
        chunks: dict[str, list[ChunkRow]] = {path: [] for path in documents}
        if documents:
            for path, *rest in conn.execute(
                "SELECT d.path, c.chunk_index, c.heading, c.level, c.content, c.token_count, "
                "c.context_text, v.embedding FROM chunks c "
                "JOIN documents d ON d.id = c.document_id "
                "JOIN vec_chunks v ON v.chunk_id = c.id ORDER BY d.path, c.chunk_index"
            ):
                chunks[path].append(tuple(rest))
        matches = _matches(conn)
    finally:
        conn.close()
    return IndexState(documents, {p: tuple(rows) for p, rows in chunks.items()}, matches)


@dataclass(frozen=True)
class Scenario:
    name: str
    kb: Path
    base_db: Path | None  # the database the run starts from (None: no database)
    expected: IndexState  # what the same run leaves when nothing kills it
    known: dict[tuple[str, str], tuple[DocRow, tuple[ChunkRow, ...]]]  # (path, hash) -> whole
    known_matches: dict[str, frozenset[tuple[str, str, int]]]  # query -> FTS hits, any version
    steps: int  # progress callbacks of a complete run
    seconds: float  # wall time of a complete run, for the timed kills


def _whole_documents(*states: IndexState) -> dict[tuple[str, str], tuple[DocRow, tuple]]:
    known = {}
    for state in states:
        for path, row in state.documents.items():
            known[(path, str(row[0]))] = (row, state.chunks[path])
    return known


def _all_matches(*states: IndexState) -> dict[str, frozenset[tuple[str, str, int]]]:
    keys = states[0].matches if states else {}
    return {q: frozenset().union(*(s.matches[q] for s in states)) for q in keys}


def index_args(kb: Path, db: Path) -> list[str]:
    return ["index", "--kb-path", str(kb), "--db", str(db)]


def copy_db(source: Path, dest: Path) -> None:
    for suffix in ("", "-wal"):
        if Path(f"{source}{suffix}").exists():
            shutil.copyfile(f"{source}{suffix}", f"{dest}{suffix}")


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    w = Worker(tmp_path_factory.mktemp("crash-worker"))
    yield w
    w.close()


def _complete_run(worker: Worker, kb: Path, db: Path) -> tuple[Outcome, float]:
    started = time.perf_counter()
    outcome = worker.run(index_args(kb, db))
    seconds = time.perf_counter() - started
    assert outcome.exit == 0, outcome.stderr
    assert outcome.stderr == ""
    return outcome, seconds


@dataclass(frozen=True)
class Built:
    """The KB versions and their indexes, each made by one complete (unkilled) run."""

    kb1: Path
    kb2: Path
    v1_db: Path  # clean build of kb1
    clean_v2: IndexState  # clean build of kb2
    updated: IndexState  # v1_db updated to kb2
    build: tuple[Outcome, float]
    update: tuple[Outcome, float]


@pytest.fixture(scope="module")
def built(worker: Worker, tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("crash-kbs")
    v1 = kb_v1()
    kb1 = write_kb(root / "v1" / "kb", v1)
    kb2 = write_kb(root / "v2" / "kb", kb_v2(v1))
    build = _complete_run(worker, kb1, root / "v1.db")
    _complete_run(worker, kb2, root / "v2.db")
    copy_db(root / "v1.db", root / "updated.db")
    update = _complete_run(worker, kb2, root / "updated.db")
    return Built(
        kb1, kb2, root / "v1.db", read_state(root / "v2.db"), read_state(root / "updated.db"),
        build, update,
    )  # fmt: skip


@pytest.fixture(scope="module")
def scenarios(built: Built) -> dict[str, Scenario]:
    """The update is compared with the same update run to the end."""
    state1 = read_state(built.v1_db)
    (build_run, build_seconds), (update_run, update_seconds) = built.build, built.update
    assert build_run.steps is not None and update_run.steps is not None
    return {
        "build": Scenario(
            "build",
            built.kb1,
            None,
            state1,
            _whole_documents(state1),
            _all_matches(state1),
            build_run.steps,
            build_seconds,
        ),
        "update": Scenario(
            "update",
            built.kb2,
            built.v1_db,
            built.updated,
            _whole_documents(state1, built.updated),
            _all_matches(state1, built.updated),
            update_run.steps,
            update_seconds,
        ),
    }


def test_an_update_leaves_what_a_clean_build_leaves(built: Built) -> None:
    assert built.updated.documents == built.clean_v2.documents


def test_an_update_and_a_clean_build_agree_on_chunks_vectors_and_fts(built: Built) -> None:
    assert built.updated.chunks == built.clean_v2.chunks
    assert built.updated.matches == built.clean_v2.matches


def test_the_generated_kb_is_big_and_the_update_makes_every_kind_of_change(
    built: Built, scenarios: dict[str, Scenario]
) -> None:
    build, update = scenarios["build"], scenarios["update"]
    assert (len(build.expected.documents), build.expected.chunk_count) == (300, 1215)
    assert built.update[0].stdout.startswith(
        "indexed 55 file(s), 225 unchanged, 15 renamed, 10 metadata-only, 20 removed, "
        "0 skipped; 1262 chunks (253 embedded) in "
    )
    # Every write transaction spans many progress callbacks, so kill points land inside.
    assert build.steps > 1000 and update.steps > 500


def check_after_kill(scenario: Scenario, db: Path, worker: Worker) -> int:
    """Everything that must hold right after a kill; returns the documents left in the index."""
    if not db.exists():  # killed before the database was created
        return 0
    state = read_state(db)
    for path, row in state.documents.items():
        whole = scenario.known.get((path, str(row[0])))
        assert whole == (row, state.chunks[path]), f"{path} is not a whole document"
    present = {(path, str(row[0])) for path, row in state.documents.items()}
    for query, hits in state.matches.items():
        assert hits == {m for m in scenario.known_matches[query] if m[:2] in present}
    if not state.documents and not _has_vector_table(db):
        return 0  # killed before the first build recorded its model
    with open_engine(scenario.kb, db_path=db, embedder=HashingEmbedder()) as engine:
        hits = engine.search(QUERIES[0]).hits
    assert bool(hits) == bool(state.documents)
    searched = worker.run(["search", QUERIES[0], "--kb-path", str(scenario.kb), "--db", str(db)])
    assert searched.exit == 0, searched.stderr
    return len(state.documents)


def _has_vector_table(db: Path) -> bool:
    conn = connect(db)
    try:
        return _table_exists(conn, "vec_chunks")
    finally:
        conn.close()


SUMMARY_CHUNKS = re.compile(r"; (\d+) chunks \(")


def check_recovery(scenario: Scenario, db: Path, worker: Worker) -> None:
    """The next ``groove index`` completes and leaves what a clean build leaves."""
    outcome = worker.run(index_args(scenario.kb, db))
    assert outcome.exit == 0, outcome.stderr
    assert outcome.stderr == ""
    printed = SUMMARY_CHUNKS.search(outcome.stdout)
    assert printed is not None and int(printed.group(1)) == scenario.expected.chunk_count
    assert read_state(db) == scenario.expected


def kill_and_recover(
    scenario: Scenario,
    worker: Worker,
    db: Path,
    *,
    step: int | None = None,
    delay: float | None = None,
) -> tuple[Outcome, int]:
    if scenario.base_db is not None:
        copy_db(scenario.base_db, db)
    outcome = worker.run(index_args(scenario.kb, db), kill_at_step=step, kill_after=delay)
    if step is not None:  # deterministic: the child must have died at that step
        assert outcome.killed, (outcome.exit, outcome.stderr)
    elif not outcome.killed:  # a timed kill may come after a complete run
        assert outcome.exit == 0, outcome.stderr
    left = check_after_kill(scenario, db, worker)
    check_recovery(scenario, db, worker)
    return outcome, left


def spread(total: int, n: int) -> list[int]:
    """``n`` kill points evenly spread over ``1..total`` (the middle of each 1/n slice)."""
    return [max(1, int(total * (i + 0.5) / n)) for i in range(n)]


def run_kill_points(
    scenario: Scenario, worker: Worker, tmp_path: Path, deterministic: int, timed: int
) -> list[int]:
    documents_left = []
    for i, step in enumerate(spread(scenario.steps, deterministic)):
        _, left = kill_and_recover(scenario, worker, tmp_path / f"step-{i}.db", step=step)
        documents_left.append(left)
    for i in range(timed):
        delay = scenario.seconds * (i + 0.5) / timed
        kill_and_recover(scenario, worker, tmp_path / f"timed-{i}.db", delay=delay)
    return documents_left


@pytest.mark.parametrize("name", ["build", "update"])
def test_kill_at_ten_points_then_recover(
    name: str, scenarios: dict[str, Scenario], worker: Worker, tmp_path: Path
) -> None:
    scenario = scenarios[name]
    left = run_kill_points(scenario, worker, tmp_path, deterministic=8, timed=2)
    if name == "build":
        # The kills landed while documents were being written, not only before or after.
        assert any(0 < n < len(scenario.expected.documents) for n in left), left


@pytest.mark.slow
@pytest.mark.parametrize("name", ["build", "update"])
def test_kill_at_eighty_points_then_recover(
    name: str, scenarios: dict[str, Scenario], worker: Worker, tmp_path: Path
) -> None:
    run_kill_points(scenarios[name], worker, tmp_path, deterministic=60, timed=20)


@pytest.mark.slow
def test_a_kill_during_the_recovery_is_recovered_too(
    scenarios: dict[str, Scenario], worker: Worker, tmp_path: Path
) -> None:
    scenario = scenarios["update"]
    for i, step in enumerate(spread(scenario.steps, 10)):
        db = tmp_path / f"twice-{i}.db"
        assert scenario.base_db is not None
        copy_db(scenario.base_db, db)
        first = worker.run(index_args(scenario.kb, db), kill_at_step=step)
        second = worker.run(index_args(scenario.kb, db), kill_at_step=max(1, step // 2))
        assert first.killed and (second.killed or second.exit == 0)
        check_after_kill(scenario, db, worker)
        check_recovery(scenario, db, worker)


@pytest.mark.parametrize("step", [1, 5, 10])
def test_a_first_build_killed_before_it_records_its_model_is_reported_as_not_built(
    step: int, scenarios: dict[str, Scenario], worker: Worker, tmp_path: Path
) -> None:
    scenario = scenarios["build"]
    db = tmp_path / "early.db"
    if not worker.run(index_args(scenario.kb, db), kill_at_step=step).killed:
        pytest.fail(f"the build was not killed at progress callback {step}")
    if _has_vector_table(db):
        pytest.fail(f"at progress callback {step} the build had already made vec_chunks")
    searched = worker.run(["search", QUERIES[0], "--kb-path", str(scenario.kb), "--db", str(db)])
    assert "Traceback" not in searched.stderr
    assert searched.exit in (0, 2), searched.stderr
    assert searched.stderr.startswith(f"Error: The index at {db} was never completed")
    with pytest.raises(IndexMissingError):
        open_engine(scenario.kb, db_path=db, embedder=HashingEmbedder())
