"""LanceDB (embedded), live: export, the retriever, parity with RRFReranker, failures."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from groove.cli import cli
from groove.fusion import Fusion
from groove.golden.queries import load_golden
from groove.retrievers.backends.lance import LanceRetriever
from groove.retrievers.base import RetrieverQuery

pytest.importorskip("lancedb", reason="the groove[lancedb] extra")


@pytest.fixture
def exported(tmp_path: Path, indexed_kb: Callable[[str], Path]) -> str:
    kb = indexed_kb("kb_en")
    url = f"lancedb://{tmp_path / 'lance'}"
    out = CliRunner().invoke(cli, ["export", "--kb-path", str(kb), "--to", url])
    assert out.exit_code == 0, out.output
    return url


def _groups(pairs: list[tuple[tuple[str, str | None], float]]) -> list[list[object]]:
    """Runs of equal float32 scores, each as a sorted list of labels (LanceDB sorts float32
    scores; ties within a run may come in another order)."""
    import numpy as np

    out: list[list[object]] = []
    last = None
    for label, score in pairs:
        s = float(np.float32(score))
        if s != last:
            out.append([])
            last = s
        out[-1].append(label)
    return [sorted(g, key=str) for g in out]


@pytest.mark.parametrize(("k", "window"), [(60, 100), (10, 20), (1, 10)])
def test_grooves_rrf_of_the_legs_equals_lancedbs_rrf_reranker(
    exported: str, golden_en: Path, real_embedder: object, k: int, window: int
) -> None:
    queries = load_golden(golden_en).queries
    url = f"{exported}?k={k}&window={window}"
    retriever = LanceRetriever(url, "lance", embedder=real_embedder)  # type: ignore[arg-type]
    hits = retriever.retrieve([RetrieverQuery(q.id, q.query, window) for q in queries])
    fusion = Fusion("rrf", float(k), window=window)
    for q, engine in zip(queries, hits, strict=True):
        legs = retriever.legs[q.id]
        assert legs.vector and len(legs.vector) <= window
        labels = legs.labels()
        client = [
            (labels[key], s)
            for key, s in fusion.fuse(legs.scored("vector"), legs.scored("lexical"))
        ]
        client = client[: len(engine)]
        assert [s for _, s in client] == pytest.approx([h.score for h in engine], rel=1e-6)
        assert _groups(client) == _groups([((h.path, h.heading), h.score) for h in engine]), q.id


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_eval_through_lancedb_and_its_failures_exit_2_with_the_history_unchanged(
    exported: str, golden_en: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    golden = work / "golden.yml"
    golden.write_bytes(golden_en.read_bytes())
    args = ["eval", "--golden", str(golden), "--format", "json", "--retriever-name", "lance"]
    ok = CliRunner().invoke(cli, [*args, "--retriever", exported])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["aggregate"]["recall_at_k"]["10"] >= 0.8
    import lancedb
    import pyarrow as pa

    folder = exported.removeprefix("lancedb://")
    lancedb.connect(folder).create_table("other", data=pa.table({"x": [1, 2]}))
    before = _files(work)
    failures = {
        f"lancedb://{tmp_path / 'nowhere'}": "no LanceDB database at",
        f"{exported}?table=missing": "cannot open table 'missing'",
        f"{exported}?table=other": "is not a groove export",
    }
    for spec, message in failures.items():
        out = CliRunner().invoke(cli, [*args, "--retriever", spec])
        assert out.exit_code == 2, (spec, out.output)
        assert message in out.output
        assert len([line for line in out.output.splitlines() if line.startswith("Error:")]) == 1
        assert _files(work) == before, spec


def test_export_into_a_folder_it_cannot_write_or_a_bad_table_is_exit_2(
    indexed_kb: Callable[[str], Path], tmp_path: Path
) -> None:
    """`groove export --to lancedb:///...` under a file, or with a table name LanceDB
    refuses, printed a Python traceback and exited 1."""
    kb = indexed_kb("kb_en")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder", encoding="utf-8")
    cases = {
        f"lancedb://{blocker / 'kb.lance'}": "cannot write the LanceDB database",
        f"lancedb://{tmp_path / 'kb.lance'}?table=bad%20name": "table name",
        f"lancedb://{tmp_path / 'kb.lance'}?table=bad name": "table name",
    }
    for url, message in cases.items():
        out = CliRunner().invoke(cli, ["export", "--kb-path", str(kb), "--to", url])
        assert out.exit_code == 2, (url, out.output)
        lines = out.stderr.splitlines()
        assert lines[0].startswith("Error: ") and message in lines[0], out.stderr
        assert lines[1].startswith("hint: ") and len(lines) == 2, out.stderr
        assert "Traceback" not in out.output
    assert blocker.read_text(encoding="utf-8") == "a file, not a folder"
    assert not (tmp_path / "kb.lance").exists()
