"""The documentation is also the example knowledge base of `make demo`: keep both honest.

docs/ is indexed and evaluated with examples/golden.yml, so these tests check that the golden
set loads, points at real notes and headings, is never quoted by the notes themselves (the
golden-queries-quoted check would flag it and the quotes would outrank the answers), that
every answer comes back in the top 10 with the real engine, that examples/groove.toml is a
valid config, that every flag of eval / tune / index / search is documented, and that the
links between these pages resolve.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import click
import pytest

from groove.config import FusionConfig, load_config
from groove.engine.chunking import parse_markdown
from groove.engine.query import compile_query
from groove.golden.findings import MIN_QUERY_CHARS, normalise
from groove.golden.queries import GoldenSet, load_golden

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
GOLDEN = ROOT / "examples" / "golden.yml"
CONFIG = ROOT / "examples" / "groove.toml"
OWN_PAGES = (
    "eval.md",
    "eval.ja.md",
    "tune.md",
    "tune.ja.md",
    "architecture.md",
    "search.md",
    "api.md",
    "engines.md",
)


def _golden() -> GoldenSet:
    return load_golden(GOLDEN, check_query=compile_query)


def _headings(path: Path) -> set[str]:
    doc = parse_markdown(path.read_text(encoding="utf-8"), path.name)
    return {c.heading.strip().lower() for c in doc.chunks if c.heading}


def test_example_golden_loads_and_points_at_real_notes() -> None:
    golden = _golden()
    assert 10 <= len(golden.queries) <= 14
    assert len({q.id for q in golden.queries}) == len(golden.queries)
    for q in golden.queries:
        assert q.expected, q.id
        for e in q.expected:
            note = DOCS / e.path
            assert note.is_file(), f"{q.id}: {e.path} is not in docs/"
            if e.heading is not None:
                assert e.heading.strip().lower() in _headings(note), f"{q.id}: {e.heading}"


def test_example_golden_covers_english_and_japanese_notes() -> None:
    paths = {e.path for q in _golden().queries for e in q.expected}
    assert any(p.endswith(".ja.md") for p in paths)
    assert any(not p.endswith(".ja.md") for p in paths)


def test_no_doc_quotes_a_golden_query() -> None:
    needles = {
        q.id: normalise(q.query)
        for q in _golden().queries
        if len(normalise(q.query)) >= MIN_QUERY_CHARS
    }
    assert len(needles) == len(_golden().queries)
    for note in sorted(DOCS.rglob("*.md")):
        rel = note.relative_to(DOCS).as_posix()
        doc = parse_markdown(note.read_text(encoding="utf-8"), rel)
        for chunk in doc.chunks:
            for field in (chunk.heading, chunk.context, chunk.content):
                text = normalise(field or "")
                quoted = [qid for qid, needle in needles.items() if needle in text]
                assert quoted == [], f"{rel} quotes golden queries {quoted}"


def test_example_config_is_valid_and_points_at_the_demo() -> None:
    config = load_config(CONFIG)
    assert config.kb_path is not None and config.kb_path.resolve() == DOCS
    golden = config.value("eval.golden")
    assert golden is not None and golden.resolve() == GOLDEN
    assert config.search.fusion == FusionConfig()  # the example must not move the baseline
    assert config.contextual is False


def _flags(command: click.Command) -> set[str]:
    return {
        opt
        for param in command.params
        if isinstance(param, click.Option)
        for opt in param.opts
        if opt.startswith("--") and opt != "--help"
    }


@pytest.mark.parametrize(
    ("command", "pages"),
    [
        ("eval", ("eval.md", "eval.ja.md")),
        ("tune", ("tune.md", "tune.ja.md")),
        ("index", ("search.md",)),
        ("search", ("search.md",)),
    ],
)
def test_every_flag_is_documented(command: str, pages: tuple[str, ...]) -> None:
    from groove.cli import cli

    found = cli.get_command(click.Context(cli), command)  # registered on first use
    assert found is not None
    flags = _flags(found)
    assert flags
    for page in pages:
        text = (DOCS / page).read_text(encoding="utf-8")
        missing = sorted(f for f in flags if f not in text)
        assert missing == [], f"{page} does not mention {missing}"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower-case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    fenced = False
    anchors = set()
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            anchors.add(_slug(line.lstrip("#")))
    return anchors


@pytest.mark.parametrize("page", OWN_PAGES)
def test_links_between_own_pages_resolve(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]+))?\)", text):
        if target.startswith("http"):
            continue
        path = (DOCS / target).resolve() if target else DOCS / page
        if path.name not in OWN_PAGES and path.parent == DOCS:
            continue  # pages other people write (ci.md, notebooks.md, ...)
        assert path.exists(), f"{page}: broken link {target}"
        if anchor:
            assert anchor in _anchors(path), f"{page}: no heading for #{anchor} in {path.name}"


@pytest.mark.slow
def test_every_golden_answer_is_in_the_top_10(real_embedder, tmp_path: Path) -> None:
    from groove.config import Config
    from groove.engine.index import build
    from groove.evaluation.run import run
    from groove.evaluation.settings import resolve_settings

    kb = tmp_path / "docs"
    shutil.copytree(DOCS, kb, ignore=shutil.ignore_patterns(".groove-eval-history.json*"))
    build(kb, real_embedder)
    settings = resolve_settings(Config(), kb_path=kb, golden=GOLDEN, history=False)
    result = run(settings, embedder=real_embedder)
    missed = [q.id for q in result.per_query if q.metrics.recall_at_k[10] < 1.0]
    assert missed == [], (
        f"golden queries {missed} no longer find their note in docs/: reword the query "
        "or the note (never quote the query in the note), see docs/eval.md"
    )
    assert result.findings == ()


@pytest.mark.slow
@pytest.mark.model
def test_the_sample_outputs_in_the_docs_are_what_the_commands_print() -> None:
    """docs/eval.md and docs/tune.md (and their twins) quote `make demo`'s eval and a tune
    run on docs/; a fresh run must print the same (bench/doc_samples.py rewrites them)."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "bench" / "doc_samples.py"
    spec = importlib.util.spec_from_file_location("doc_samples", path)
    assert spec is not None and spec.loader is not None
    doc_samples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(doc_samples)
    fresh = doc_samples.samples()
    assert doc_samples.differences(fresh) == [], "run: python bench/doc_samples.py"
    assert "corpus: " in fresh["eval"] and "## Verdict" in fresh["tune-stdout"]
