"""``http://...`` / ``https://...``: one POST per query, several in flight.

The request body is ``{"query": ..., "limit": ...}`` or ``--retriever-body`` with its
``"{{query}}"``, ``"{{limit}}"`` and ``"{{id}}"`` values filled in (so an OpenSearch or
Elasticsearch ``_search`` body needs no shim); the answer is read through the field map.
Connection errors and 5xx answers are retried with exponential backoff; a request that gets
no answer within the timeout, a 4xx answer (its ``{"error": ...}`` reason quoted, as groove
serve gives one) or a broken answer stops the run at once.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any

from groove.errors import ConfigError, RetrieverError, literal
from groove.metrics import RankedHit
from groove.notes import Note
from groove.retrievers.base import (
    ProgressFn,
    RetrieverQuery,
    parse_hits,
    violation,
)
from groove.retrievers.legs import QueryLegs, parse_legs
from groove.retrievers.spec import RetrieverSpec
from groove.runs.latency import QueryTiming

if TYPE_CHECKING:
    import httpx

BACKOFF_FIRST_SECONDS = 0.2
BACKOFF_MAX_SECONDS = 5.0
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")


def expand_headers(
    headers: Sequence[str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``"Name: value"`` pairs with ``$VAR`` / ``${VAR}`` taken from the environment."""
    env = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for header in headers:
        name, _, value = header.partition(":")
        name = name.strip()

        def variable(match: re.Match[str], header_name: str = name) -> str:
            var = match.group(1) or match.group(2)
            if var not in env:
                raise ConfigError(
                    f"retriever header {header_name} uses ${var}, which is not set",
                    f"export {var}=... before running groove",
                )
            return env[var]

        out[name] = _VARIABLE.sub(variable, value.strip())
    return out


def fill(template: Any, q: RetrieverQuery) -> Any:
    """The request template with its placeholder values replaced (only whole values)."""
    if isinstance(template, dict):
        return {k: fill(v, q) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, q) for v in template]
    if template == "{{query}}":
        return q.query
    if template == "{{limit}}":
        return q.limit
    if template == "{{id}}":
        return q.id
    return template


#: The most of a refusal's reason an error line quotes.
REASON_CHARS = 200


def refusal_reason(response: httpx.Response) -> str:
    """`` (reason)`` when a refused request's answer says why as ``{"error": "..."}`` (as
    groove serve does: an unknown key, a bad limit), else ``""``: the error line carries
    the service's own words, first line only, shortened."""
    try:
        said = response.json().get("error")
    except (ValueError, UnicodeDecodeError, AttributeError):
        return ""
    if not isinstance(said, str) or not said.strip():
        return ""
    line = said.strip().splitlines()[0]
    return f" ({line[:REASON_CHARS]}{'...' if len(line) > REASON_CHARS else ''})"


class HttpRetriever:
    kind = "http"

    def __init__(self, spec: RetrieverSpec) -> None:
        self.name = spec.name
        self.url = spec.target
        self.options = spec.options
        self.headers = expand_headers(spec.options.headers)
        self.template = json.loads(spec.options.body) if spec.options.body else None
        self.notes: list[Note] = []
        self.legs: dict[str, QueryLegs] = {}  # query id -> the answer's legs, when it has them
        self.timings: dict[str, QueryTiming] = {}  # query id -> the answered request's time

    def retrieve(
        self, queries: Sequence[RetrieverQuery], progress: ProgressFn | None = None
    ) -> list[tuple[RankedHit, ...]]:
        import httpx

        n = self.options.concurrency
        limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
        results: list[tuple[RankedHit, ...] | None] = [None] * len(queries)
        client = httpx.Client(
            timeout=self.options.timeout, headers=self.headers, limits=limits, trust_env=False
        )
        pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="groove-retriever")
        try:
            futures: dict[Future[tuple[RankedHit, ...]], int] = {
                pool.submit(self._one, client, q): i for i, q in enumerate(queries)
            }
            pending = set(futures)
            answered = 0
            while pending:
                done, pending = wait(pending, return_when=FIRST_EXCEPTION)
                for future in done:
                    results[futures[future]] = future.result()  # raises the first failure
                answered += len(done)
                if progress is not None:
                    progress(answered, len(queries))
        finally:
            # On a failure: drop the queued queries, do not wait for those in flight.
            pool.shutdown(wait=False, cancel_futures=True)
            client.close()
        return [r if r is not None else () for r in results]

    def close(self) -> None:
        """Nothing stays open between runs: the client lives inside ``retrieve``."""

    def _one(self, client: httpx.Client, q: RetrieverQuery) -> tuple[RankedHit, ...]:
        import httpx

        body = (
            fill(self.template, q)
            if self.template is not None
            else {
                "query": q.query,
                "limit": q.limit,
            }
        )
        attempts = self.options.retries + 1
        problem = ""
        for attempt in range(attempts):
            if attempt:
                time.sleep(min(BACKOFF_FIRST_SECONDS * 2 ** (attempt - 1), BACKOFF_MAX_SECONDS))
            try:
                start = time.perf_counter()
                response = client.post(self.url, json=body)
                took = time.perf_counter() - start
            except httpx.ConnectTimeout:
                problem = f"no connection within {self.options.timeout:g}s"
                continue
            except httpx.TimeoutException:
                raise RetrieverError(
                    literal(
                        f"retriever gave no answer for query {q.id!r} "
                        f"within {self.options.timeout:g}s"
                    ),
                    "raise {setting}, or check the service",
                    setting="retriever_timeout",
                ) from None
            except httpx.TransportError as exc:
                problem = (
                    f"cannot connect ({exc})"
                    if isinstance(exc, httpx.ConnectError)
                    else (f"{type(exc).__name__} ({exc})")
                )
                continue
            if response.status_code >= 500:
                problem = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
                continue
            if not 200 <= response.status_code < 300:
                raise RetrieverError(
                    literal(
                        f"retriever request for query {q.id!r} failed: HTTP "
                        f"{response.status_code} {response.reason_phrase}".rstrip()
                        + refusal_reason(response)
                    ),
                    "check the URL, the headers and {setting}",
                    setting="retriever_body",
                )
            try:
                answer = response.json()
            except (ValueError, UnicodeDecodeError) as exc:
                message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                raise violation(q.id, f"the answer is not JSON ({message})") from None
            hits = parse_hits(answer, q.id, q.limit, self.options.fields)
            legs = parse_legs(answer, q.id) if isinstance(answer, dict) else None
            if legs is not None:
                self.legs[q.id] = legs  # one key per query: safe across the pool's threads
            self.timings[q.id] = QueryTiming(took)
            return hits
        raise RetrieverError(
            literal(
                f"retriever request for query {q.id!r} failed after {attempts} attempt(s): "
                f"{problem}"
            ),
            "is the service up? ({setting} sets how often groove tries)",
            setting="retriever_retries",
        )
