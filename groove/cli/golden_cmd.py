"""``groove golden import`` / ``export-qrels``: move golden sets to and from IR tooling."""

from __future__ import annotations

from pathlib import Path

import click

from groove.cli.common import config_from, kb_option, warn


@click.group("golden")
def golden_group() -> None:
    """Golden sets: qrels in and out, pool unjudged hits, apply judgements."""


@golden_group.command("import")
@click.option(
    "--qrels",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="TREC qrels (qid 0 docid rel) or BEIR qrels TSV (query-id, corpus-id, score).",
)
@click.option(
    "--queries",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help='BEIR queries.jsonl ({"_id", "text"}) or qid<TAB>text lines.',
)
@click.option(
    "--path",
    "path_template",
    default="{docid}",
    show_default=True,
    help="KB-relative path of a document id, e.g. 'docs/{docid}.md'.",
)
@click.option(
    "--min-relevance",
    type=int,
    default=1,
    show_default=True,
    help="Judgments below this are not relevant.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Golden YAML to write (default: standard output).",
)
def import_cmd(
    qrels: Path, queries: Path, path_template: str, min_relevance: int, out: Path | None
) -> None:
    """Build a golden YAML from qrels plus a queries file."""
    from groove.golden.qrels import golden_from_qrels, read_qrels, read_queries, write_atomic
    from groove.golden.queries import load_golden

    text, count = golden_from_qrels(
        read_qrels(qrels),
        read_queries(queries),
        path_template=path_template,
        min_relevance=min_relevance,
        source=f"{qrels.name} and {queries.name}",
    )
    if out is None:
        click.echo(text, nl=False)
    else:
        write_atomic(out, text)
        load_golden(out)  # what was written reads back under the golden schema
    warn(f"groove golden import: {count} queries with relevant documents")


@golden_group.command("export-qrels")
@kb_option
@click.option(
    "--golden",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Golden YAML (default: [eval].golden, else <kb>/.groove-eval.yml).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="TREC qrels file to write (default: standard output).",
)
@click.option(
    "--queries-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the queries as qid<TAB>text lines.",
)
@click.pass_context
def export_qrels_cmd(
    ctx: click.Context,
    kb_path: Path | None,
    golden: Path | None,
    out: Path | None,
    queries_out: Path | None,
) -> None:
    """Write a golden set as TREC qrels (qid 0 docid 1; docid = path or path#heading)."""
    from groove.engine.session import check_kb_path
    from groove.errors import GoldenError
    from groove.evaluation.settings import golden_path_for
    from groove.golden.qrels import qrels_lines, queries_lines, write_atomic
    from groove.golden.queries import load_golden

    config = config_from(ctx)
    if golden is None:
        kb = kb_path if kb_path is not None else config.kb_path
        if kb is None and config.eval.golden is None:
            raise GoldenError("no golden file given", "pass --golden FILE or --kb-path KB")
        golden = config.eval.golden or golden_path_for(config, check_kb_path(kb), None)
    golden_set = load_golden(golden)
    if queries_out is not None:
        write_atomic(queries_out, queries_lines(golden_set))
    if out is None:
        click.echo(qrels_lines(golden_set), nl=False)
    else:
        write_atomic(out, qrels_lines(golden_set))


def register(cli: click.Group) -> None:
    cli.add_command(golden_group)
