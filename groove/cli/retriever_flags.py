"""The ``--retriever`` family of ``groove eval`` flags, and the progress bar of its run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from groove.cli.common import F, stderr_is_terminal

if TYPE_CHECKING:
    from groove.evaluation.retrievers.spec import RetrieverSpec


def retriever_options(f: F) -> F:
    options = [
        click.option(
            "--retriever",
            "retriever",
            default=None,
            metavar="SPEC",
            help="Measure another retriever: command:PROGRAM [ARGS...], http(s)://URL or "
            "run:FILE (docs/retrievers.md).",
        ),
        click.option(
            "--retriever-name",
            default=None,
            help="Its name in the fingerprint (default: the program, URL or file name).",
        ),
        click.option(
            "--retriever-header",
            "retriever_headers",
            multiple=True,
            metavar="'NAME: VALUE'",
            help="HTTP header; $VAR takes the value from the environment (repeatable).",
        ),
        click.option(
            "--retriever-timeout",
            type=click.FloatRange(min=0, min_open=True),
            default=None,
            metavar="SECONDS",
            help="Per-query answer timeout (default 30).",
        ),
        click.option(
            "--retriever-concurrency",
            type=click.IntRange(min=1),
            default=None,
            help="HTTP requests in flight (default 4).",
        ),
        click.option(
            "--retriever-retries",
            type=click.IntRange(min=0),
            default=None,
            help="HTTP retries on connection errors and 5xx (default 3).",
        ),
        click.option(
            "--retriever-body",
            default=None,
            metavar="JSON",
            help='HTTP request template with "{{query}}", "{{limit}}", "{{id}}" values.',
        ),
        click.option(
            "--retriever-hits",
            default=None,
            metavar="PATH",
            help="Where the hit list is in an HTTP answer (default hits; OpenSearch: hits.hits).",
        ),
        click.option(
            "--retriever-field",
            "retriever_fields",
            multiple=True,
            metavar="NAME=PATH",
            help="Where path / heading / score sit in a hit, e.g. path=_source.path (repeatable).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def spec_from_flags(
    retriever: str | None,
    retriever_name: str | None,
    retriever_headers: tuple[str, ...],
    retriever_timeout: float | None,
    retriever_concurrency: int | None,
    retriever_retries: int | None,
    retriever_body: str | None,
    retriever_hits: str | None,
    retriever_fields: tuple[str, ...],
) -> RetrieverSpec | None:
    from groove.errors import ConfigError
    from groove.evaluation.retrievers.spec import RetrieverOptions, field_map, parse_spec

    if retriever is None:
        given = [
            name
            for name, value in (
                ("--retriever-name", retriever_name),
                ("--retriever-header", retriever_headers or None),
                ("--retriever-timeout", retriever_timeout),
                ("--retriever-concurrency", retriever_concurrency),
                ("--retriever-retries", retriever_retries),
                ("--retriever-body", retriever_body),
                ("--retriever-hits", retriever_hits),
                ("--retriever-field", retriever_fields or None),
            )
            if value is not None
        ]
        if given:
            raise ConfigError(f"{given[0]} needs --retriever", "pass --retriever SPEC as well")
        return None
    defaults = RetrieverOptions()
    options = RetrieverOptions(
        headers=retriever_headers,
        timeout=retriever_timeout if retriever_timeout is not None else defaults.timeout,
        concurrency=retriever_concurrency or defaults.concurrency,
        retries=retriever_retries if retriever_retries is not None else defaults.retries,
        body=retriever_body,
        fields=field_map(retriever_hits, retriever_fields),
    )
    return parse_spec(retriever, name=retriever_name, options=options)


class ProgressBar:
    """A tqdm bar over queries answered, on a terminal only (as ``groove index`` shows)."""

    def __init__(self) -> None:
        self.enabled = stderr_is_terminal()
        self.bar: Any = None

    def update(self, done: int, total: int) -> None:
        if not self.enabled or total == 0:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="query", desc="retrieving", leave=False)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
