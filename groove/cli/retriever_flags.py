"""The ``--retriever`` family of ``groove eval`` flags."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groove.retrievers.spec import RetrieverSpec


# The --retriever family of flags (declared in groove.settings.EVAL), in --help order.
RETRIEVER_FLAGS = (
    "retriever",
    "retriever_name",
    "retriever_headers",
    "retriever_timeout",
    "retriever_allow_stale_copy",
    "retriever_ann_recall",
    "retriever_concurrency",
    "retriever_retries",
    "retriever_body",
    "retriever_hits",
    "retriever_fields",
)


def spec_from_flags(
    retriever: str | None,
    retriever_name: str | None,
    retriever_headers: tuple[str, ...],
    retriever_timeout: float | None,
    retriever_allow_stale_copy: bool | None,
    retriever_ann_recall: bool | None,
    retriever_concurrency: int | None,
    retriever_retries: int | None,
    retriever_body: str | None,
    retriever_hits: str | None,
    retriever_fields: tuple[str, ...],
) -> RetrieverSpec | None:
    from groove.retrievers.spec import (
        RetrieverOptions,
        field_map,
        parse_spec,
        refuse_without_retriever,
    )

    if retriever is None:
        flags = (
            retriever_name,
            retriever_headers,
            retriever_timeout,
            retriever_allow_stale_copy,
            retriever_ann_recall,
            retriever_concurrency,
            retriever_retries,
            retriever_body,
            retriever_hits,
            retriever_fields,
        )
        given = dict(zip(RETRIEVER_FLAGS[1:], flags, strict=True))
        refuse_without_retriever(given, RETRIEVER_FLAGS[1:])
        return None
    defaults = RetrieverOptions()
    options = RetrieverOptions(
        headers=retriever_headers,
        timeout=retriever_timeout if retriever_timeout is not None else defaults.timeout,
        concurrency=retriever_concurrency or defaults.concurrency,
        retries=retriever_retries if retriever_retries is not None else defaults.retries,
        body=retriever_body,
        fields=field_map(retriever_hits, retriever_fields),
        allow_stale_copy=bool(retriever_allow_stale_copy),
        ann_recall=bool(retriever_ann_recall),
    )
    return parse_spec(retriever, name=retriever_name, options=options)
