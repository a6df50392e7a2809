"""An engine's copy of the index, live (PostgreSQL + pgvector started here, LanceDB): the
export never replaces a table groove did not write, records which corpus it holds, and a
stale copy is refused with the history untouched; engine failures are one line, exit 2."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from helpers.pg import live_server, run_sql

from groove.cli import cli

pytest.importorskip("pgserver", reason="the groove[postgres] extra")
pytest.importorskip("lancedb", reason="the groove[lancedb] extra")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with live_server(tmp_path_factory.mktemp("pg")) as url:
        yield url


def _with(url: str, **options: object) -> str:
    return url + "".join(f"&{k}={v}" for k, v in options.items())


def _export(kb: Path, url: str, *extra: str) -> Result:
    return CliRunner().invoke(cli, ["export", "--kb-path", str(kb), "--to", url, *extra])


def _one_error(out: Result) -> list[str]:
    """The Error and hint lines of a run that failed on bad input (progress lines aside)."""
    lines = [line for line in out.stderr.splitlines() if not line.startswith("groove ")]
    assert out.exit_code == 2, out.output
    assert len(lines) == 2 and lines[0].startswith("Error: "), out.stderr
    assert lines[1].startswith("hint: "), out.stderr
    assert "Traceback" not in out.output and not out.stdout
    return lines


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_postgresql_export_refuses_a_table_groove_did_not_write(
    server: str, indexed_kb: Callable[[str], Path]
) -> None:
    kb = indexed_kb("kb_en")
    run_sql(
        server,
        "DROP TABLE IF EXISTS documents, documents_meta, notes_meta",
        "CREATE TABLE documents (doc_id int, body text)",
        "INSERT INTO documents VALUES (1, 'mine'), (2, 'also mine')",
        "CREATE TABLE notes_meta (k text)",
        "INSERT INTO notes_meta VALUES ('mine')",
    )
    lines = _one_error(_export(kb, _with(server, table="documents")))
    assert "table documents exists and groove did not write it" in lines[0]
    assert "--replace" in lines[1]
    lines = _one_error(_export(kb, _with(server, table="notes")))  # only its _meta is there
    assert "table notes_meta exists" in lines[0]
    assert run_sql(server, "SELECT doc_id, body FROM documents ORDER BY doc_id") == [
        (1, "mine"),
        (2, "also mine"),
    ]
    assert run_sql(server, "SELECT k FROM notes_meta") == [("mine",)]
    assert run_sql(server, "SELECT to_regclass('notes')") == [(None,)]
    # --replace is the one way over it; a groove export is then replaced without it
    assert _export(kb, _with(server, table="documents"), "--replace").exit_code == 0
    again = _export(kb, _with(server, table="documents"))
    assert again.exit_code == 0, again.output
    assert run_sql(server, "SELECT count(*) FROM documents") == [(33,)]


def test_lancedb_export_refuses_a_table_groove_did_not_write_and_keeps_few_versions(
    tmp_path: Path, indexed_kb: Callable[[str], Path]
) -> None:
    import lancedb
    import pyarrow as pa

    from groove.retrievers.backends.lance import KEEP_VERSIONS

    kb = indexed_kb("kb_en")
    folder = tmp_path / "kb.lance"
    lancedb.connect(str(folder)).create_table("documents", data=pa.table({"x": [1, 2]}))
    lines = _one_error(_export(kb, f"lancedb://{folder}?table=documents"))
    assert "table 'documents'" in lines[0] and "groove did not write it" in lines[0]
    assert lancedb.connect(str(folder)).open_table("documents").to_arrow().to_pydict() == {
        "x": [1, 2]
    }
    url = f"lancedb://{folder}"
    sizes = []
    for _ in range(4):
        assert _export(kb, url).exit_code == 0
        table = lancedb.connect(str(folder)).open_table("groove_chunks")
        assert len(table.list_versions()) <= KEEP_VERSIONS
        sizes.append(sum(p.stat().st_size for p in (folder / "groove_chunks.lance").rglob("*")))
    assert sizes[3] <= sizes[1] * 1.05  # the folder stops growing once old versions go
    assert _export(kb, f"{url}?table=documents", "--replace").exit_code == 0


def test_lancedb_export_writes_no_rust_warning_on_stderr(
    tmp_path: Path, indexed_kb: Callable[[str], Path]
) -> None:
    kb = indexed_kb("kb_en")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("LANCEDB_LOG", None)
    done = subprocess.run(
        [sys.executable, "-c", "from groove.cli import main; main()", "export",
         "--kb-path", str(kb), "--to", f"lancedb://{tmp_path / 'fresh.lance'}"],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == "groove export: 33 chunks written\n"


def _edit_and_reindex(kb: Path) -> None:
    page = kb / "ops" / "rollback.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nA new closing line.\n", "utf-8")
    out = CliRunner().invoke(cli, ["index", "--kb-path", str(kb)])
    assert out.exit_code == 0, out.output


@pytest.mark.parametrize("engine", ["postgresql", "lancedb"])
def test_a_stale_copy_is_refused_with_the_history_unchanged_unless_allowed(
    server: str,
    engine: str,
    indexed_kb: Callable[[str], Path],
    golden_en: Path,
    tmp_path: Path,
) -> None:
    kb = indexed_kb("kb_en")
    url = (
        _with(server, table=f"copy_{os.getpid()}")
        if engine == "postgresql"
        else f"lancedb://{tmp_path / 'kb.lance'}"
    )
    assert _export(kb, url).exit_code == 0
    golden = kb / ".groove-eval.yml"
    golden.write_bytes(golden_en.read_bytes())
    args = ["eval", "--kb-path", str(kb), "--format", "json", "--retriever", url]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    exported = json.loads(first.stdout)["corpus"]
    _edit_and_reindex(kb)
    root = kb.parent
    before = _files(root)
    for _ in range(2):  # refused each time, the history as it was
        stale = CliRunner().invoke(cli, args)
        lines = _one_error(stale)
        assert "the engine's copy is stale" in lines[0], lines
        assert "re-export" in lines[1]
        assert _files(root) == before
    allowed = CliRunner().invoke(cli, [*args, "--allow-stale-copy"])
    assert allowed.exit_code == 0, allowed.output
    assert json.loads(allowed.stdout)["corpus"] == exported  # the copy's own corpus
    assert "measuring a stale copy" in allowed.stderr
    assert _export(kb, url).exit_code == 0  # re-exported: the local corpus again
    fresh = CliRunner().invoke(cli, args)
    assert fresh.exit_code == 0, fresh.output
    corpus = json.loads(fresh.stdout)["corpus"]
    assert corpus["digest"] != exported["digest"] and corpus["chunks"] == exported["chunks"]
    tune = CliRunner().invoke(
        cli, ["tune", "--kb-path", str(kb), "--retriever", url, "--family", "rrf"]
    )
    assert tune.exit_code == 0, tune.output
    _edit_and_reindex(kb)
    tune = CliRunner().invoke(
        cli, ["tune", "--kb-path", str(kb), "--retriever", url, "--family", "rrf"]
    )
    assert "re-export" in _one_error(tune)[1]


def test_without_a_local_index_the_run_records_the_copys_corpus(
    server: str, indexed_kb: Callable[[str], Path], golden_en: Path, tmp_path: Path
) -> None:
    kb = indexed_kb("kb_en")
    url = _with(server, table="no_local")
    assert _export(kb, url).exit_code == 0
    local = CliRunner().invoke(
        cli, ["eval", "--kb-path", str(kb), "--golden", str(golden_en), "--format", "json",
              "--no-history", "--retriever", url],
    )  # fmt: skip
    golden = tmp_path / "golden.yml"
    golden.write_bytes(golden_en.read_bytes())
    out = CliRunner().invoke(
        cli, ["eval", "--golden", str(golden), "--format", "json", "--retriever", url]
    )
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["corpus"] == json.loads(local.stdout)["corpus"]


def test_engine_failures_are_one_line_exit_2(
    server: str, indexed_kb: Callable[[str], Path], golden_en: Path, tmp_path: Path
) -> None:
    kb = indexed_kb("kb_en")
    data = server.split("host=")[1]
    run_sql(
        server,
        "DROP DATABASE IF EXISTS novector",
        "DROP DATABASE IF EXISTS readonly",
        "DROP ROLE IF EXISTS app",
        "CREATE ROLE app LOGIN",
        "CREATE DATABASE novector",
        "CREATE DATABASE readonly",
    )
    readonly = f"postgresql://postgres@localhost/readonly?host={data}"
    run_sql(readonly, "CREATE EXTENSION vector", "REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    as_app = f"postgresql://app@localhost/{{db}}?host={data}"
    lines = _one_error(_export(kb, as_app.format(db="novector")))
    assert "pgvector is not installed in this database" in lines[0]
    assert "CREATE EXTENSION vector" in lines[1]
    lines = _one_error(_export(kb, as_app.format(db="readonly")))
    assert "permission denied" in lines[0]
    golden = tmp_path / "golden.yml"
    golden.write_bytes(golden_en.read_bytes())
    for timeout in ("0.0009", "0.0001"):
        out = CliRunner().invoke(
            cli,
            ["eval", "--golden", str(golden), "--retriever", server,
             "--retriever-timeout", timeout],
        )  # fmt: skip
        lines = _one_error(out)
        assert "--retriever-timeout must be at least 0.001 seconds" in lines[0], lines
    assert not (tmp_path / ".groove-history.jsonl").exists()
