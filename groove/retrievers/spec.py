"""``--retriever SPEC``: which retriever, its name in the fingerprint, and its options.

``command:PROGRAM [ARGS...]`` (split like a shell would), ``http://...`` / ``https://...``,
``run:FILE``. The name recorded in the fingerprint is ``--retriever-name`` when given, else
the whole command line (with a hash of its file arguments), the URL without user, password,
query string or fragment (with a hash of ``--retriever-body``), or the run file's path and
content hash (``identity``). Header
values are kept as written (``$VAR`` unexpanded) and expanded only when the retriever opens,
so a token never reaches the fingerprint, the history or a report.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from groove.errors import ConfigError, literal
from groove.retrievers.base import FieldMap
from groove.retrievers.identity import command_name, http_name, run_file_name

KINDS = ("command", "http", "run", "postgresql", "lancedb")
SPEC_HINT = (
    "use command:PROGRAM [ARGS...], http(s)://HOST/PATH, run:FILE, "
    "postgresql://HOST/DB or lancedb:///PATH"
)
FIELD_NAMES = ("path", "heading", "score")
FIELD_HINT = "write it like {give:path=_source.path}"  # a template: setting retriever_fields


@dataclass(frozen=True)
class RetrieverOptions:
    """How to talk to the retriever; none of it is part of the fingerprint."""

    headers: tuple[str, ...] = ()  # "Name: value", $VAR expanded at open time
    timeout: float = 30.0  # seconds per query (an HTTP request, or a command's answer)
    concurrency: int = 4  # HTTP requests in flight
    retries: int = 3  # HTTP retries on connection errors and 5xx
    body: str | None = None  # HTTP request template (JSON with "{{query}}", "{{limit}}")
    fields: FieldMap = field(default_factory=FieldMap)
    # an engine's copy of the index that differs from the local index is measured anyway
    # (groove.retrievers.provenance); the run records the copy's corpus
    allow_stale_copy: bool = False
    # an engine also runs each vector leg with exact search (groove.retrievers.ann)
    ann_recall: bool = False


#: The shortest per-query timeout: PostgreSQL's statement_timeout counts whole
#: milliseconds, and 0 there means no limit at all.
MIN_TIMEOUT = 0.001


@dataclass(frozen=True)
class RetrieverSpec:
    kind: str
    target: str  # the command line, the URL, or the run file path
    name: str
    options: RetrieverOptions = field(default_factory=RetrieverOptions)

    def fingerprint(self) -> dict[str, str]:
        return {"kind": self.kind, "name": self.name}


def parse_spec(
    text: str, *, name: str | None = None, options: RetrieverOptions | None = None
) -> RetrieverSpec:
    """Check ``text`` and the options; ConfigError (exit 2) for anything unusable."""
    text = text.strip()
    options = options or RetrieverOptions()
    _check_options(options)
    if text.startswith("command:"):
        line = text.removeprefix("command:").strip()
        try:
            argv = shlex.split(line)
        except ValueError as exc:
            raise _spec_error(f"{text!r}: {exc}") from None
        if not argv:
            raise _spec_error("command: names no program")
        return RetrieverSpec("command", line, name or command_name(argv), options)
    if text.startswith(("http://", "https://")):
        parts = urlsplit(text)
        if not parts.hostname:
            raise _spec_error(f"{text!r}: the URL names no host")
        return RetrieverSpec(
            "http", text, name or http_name(public_url(text), options.body), options
        )
    if text.startswith("run:"):
        path = text.removeprefix("run:").strip()
        if not path:
            raise _spec_error("run: names no file")
        return RetrieverSpec("run", path, name or run_file_name(path), options)
    if text.startswith(("postgresql://", "postgres://")):
        from groove.retrievers.backends.postgres_url import public_name

        return RetrieverSpec("postgresql", text, name or public_name(text), options)
    if text.startswith("lancedb://"):
        from groove.retrievers.backends.lance import public_name as lance_name

        return RetrieverSpec("lancedb", text, name or lance_name(text), options)
    raise ConfigError(f"unknown retriever {text!r}", SPEC_HINT)


def _spec_error(problem: str) -> ConfigError:
    """``--retriever`` (as the face names it) followed by what is wrong with the spec."""
    return ConfigError(f"{{setting}} {literal(problem)}", SPEC_HINT, setting="retriever")


def public_url(url: str) -> str:
    """The URL without credentials: no user or password, no query string, no fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _check_options(options: RetrieverOptions) -> None:
    if not options.timeout >= MIN_TIMEOUT:
        raise ConfigError(
            f"{{setting}} must be at least {MIN_TIMEOUT:g} seconds (1 ms), "
            f"got {literal(repr(options.timeout))}",
            "give the per-query timeout in seconds, like {give:30}",
            setting="retriever_timeout",
        )
    if options.concurrency < 1:
        raise ConfigError(f"retriever concurrency must be >= 1, got {options.concurrency}", None)
    if options.retries < 0:
        raise ConfigError(f"retriever retries must be >= 0, got {options.retries}", None)
    for header in options.headers:
        if ":" not in header or not header.split(":", 1)[0].strip():
            raise ConfigError(
                literal(f"retriever header {header.split(':', 1)[0]!r} is not 'Name: value'"),
                "pass {give:'Authorization: Bearer $TOKEN'}",
                setting="retriever_headers",
            )
    if options.body is not None:
        try:
            json.loads(options.body)
        except ValueError as exc:
            raise ConfigError(
                f"{{setting}} is not JSON: {literal(str(exc))}",
                literal(
                    'write it like {"size": "{{limit}}", "query": {"match": {"body": "{{query}}"}}}'
                ),
                setting="retriever_body",
            ) from None


def field_map(hits: str | None, fields: Sequence[str] | Mapping[str, str]) -> FieldMap:
    """``--retriever-hits`` and ``--retriever-field NAME=PATH`` as a FieldMap."""
    pairs: dict[str, str] = {}
    items = fields.items() if isinstance(fields, Mapping) else [_pair(f) for f in fields]
    for key, value in items:
        if key not in FIELD_NAMES:
            raise ConfigError(
                f"{{setting}} {literal(repr(key))}: not one of {', '.join(FIELD_NAMES)}",
                FIELD_HINT,
                setting="retriever_fields",
            )
        if not isinstance(value, str) or not value:
            raise ConfigError(
                f"{{setting}} {literal(str(key))}: empty path", None, setting="retriever_fields"
            )
        pairs[key] = value
    return FieldMap(hits=hits or "hits", **pairs)


def _pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep:
        raise ConfigError(
            f"{{setting}} {literal(repr(text))} is not NAME=PATH",
            FIELD_HINT,
            setting="retriever_fields",
        )
    return key.strip(), value.strip()


def options_from_mapping(data: Mapping[str, Any] | None) -> tuple[str | None, RetrieverOptions]:
    """The notebook's ``retriever_options`` dict: (name, options)."""
    if not data:
        return None, RetrieverOptions()
    known = {
        "name", "headers", "timeout", "concurrency", "retries", "body", "hits", "fields",
        "allow_stale_copy", "ann_recall",
    }  # fmt: skip
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(
            f"retriever_options: unknown key {unknown[0]!r}",
            f"known keys: {', '.join(sorted(known))}",
        )
    body = data.get("body")
    if body is not None and not isinstance(body, str):
        body = json.dumps(body)
    defaults = RetrieverOptions()
    headers = data.get("headers") or ()
    if isinstance(headers, str):
        headers = (headers,)
    return data.get("name"), RetrieverOptions(
        headers=tuple(str(h) for h in headers),
        timeout=float(data.get("timeout", defaults.timeout)),
        concurrency=int(data.get("concurrency", defaults.concurrency)),
        retries=int(data.get("retries", defaults.retries)),
        body=body,
        fields=field_map(data.get("hits"), data.get("fields") or {}),
        allow_stale_copy=bool(data.get("allow_stale_copy", False)),
        ann_recall=bool(data.get("ann_recall", False)),
    )


def refuse_without_retriever(given: Mapping[str, Any], names: Sequence[str]) -> None:
    """The rule of every task (eval, tune, judge) on every face: a retriever's settings
    need the retriever. The first of ``names`` that ``given`` holds (by name; None, a
    switch left off or an empty list is not given) is refused, named as the face says it."""
    for name in names:
        if _holds(given.get(name)):
            raise ConfigError(
                "{setting} needs {retriever}", "pass {give_retriever:SPEC} as well", setting=name
            )


def _holds(value: Any) -> bool:
    if isinstance(value, tuple | list | Mapping):
        return bool(value)
    return value is not None and value is not False


def spec_from_mapping(
    spec: str | None,
    options: Mapping[str, Any] | None,
    *,
    name: str | None = None,
) -> RetrieverSpec | None:
    """``retriever``, ``retriever_options`` and ``retriever_name`` of the notebook and of
    ``groove.evaluate``: the spec as ``--retriever`` takes it, the options as a mapping with
    ``name``, ``headers``, ``timeout``, ``concurrency``, ``retries``, ``body``, ``hits``,
    ``fields``, ``allow_stale_copy``, ``ann_recall``; ``name`` as ``--retriever-name`` (the
    same as the options' ``name``)."""
    if spec is None:
        lonely = {"retriever_options": options, "retriever_name": name}
        refuse_without_retriever(lonely, ("retriever_options", "retriever_name"))
        return None
    try:
        given, parsed = options_from_mapping(options)
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            "{setting} has a value of the wrong type " + literal(f"({exc})"),
            "timeout is seconds, concurrency and retries whole numbers, fields a mapping",
            setting="retriever_options",
        ) from None
    if name is not None and given not in (None, name):
        raise ConfigError(
            "{setting} " + literal(f"{name!r} and retriever_options name {given!r} disagree"),
            "give the name once",
            setting="retriever_name",
        )
    return parse_spec(spec, name=name or given, options=parsed)
