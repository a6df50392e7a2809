"""``groove serve``: groove's own engine behind the retriever HTTP contract.

``POST /search`` with ``{"query": "...", "limit": 10}`` (``limit`` optional, ``id`` echoed
back when given, any other key refused) answers ``{"hits": [{"path", "heading", "score"},
...]}``, best first: the same pipeline, options and index as ``groove search`` and ``groove
eval``. ``GET /health`` answers ``{"status": "ok"}``. A bad request gets a 4xx answer with
``{"error": "..."}``.

Requests are accepted on many threads but searched on one: the SQLite connection and the
model belong to a single worker thread. Queries that arrive while it is busy are embedded
together in one batch, as the in-process eval embeds its queries, so several requests in
flight cost little more than the same queries in process.
"""

from __future__ import annotations

import errno
import json
import queue
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

from groove.config import Config
from groove.engine.query import CompiledQuery, compile_query
from groove.engine.rerank import load_reranker
from groove.engine.search import SearchOptions, search
from groove.engine.session import Engine, open_engine
from groove.errors import GrooveError, literal
from groove.settings import SEARCH, SERVE, at_most, spelled
from groove.settings.kinds import KINDS, Refused
from groove.store.db import read_snapshot
from groove.store.sqlite import Connection

DEFAULT_HOST = SERVE["host"].default
DEFAULT_PORT = SERVE["port"].default
#: A request's limit is a search's: its default, its kind and its bound.
REQUEST_LIMIT = SEARCH["limit"]
#: Every key a request body may hold; any other is refused (400) by name.
REQUEST_KEYS = ("query", "limit", "id")
MAX_BODY_BYTES = 1 << 20
BATCH_MAX = 64  # queries embedded together at most


@dataclass(frozen=True)
class ServeSettings:
    kb_path: Path | None
    options: SearchOptions
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    db_path: Path | None = None
    model: str | None = None
    model_path: Path | None = None
    reranker: str | None = None
    config: Config | None = None
    threads: int | None = None  # onnxruntime threads for query embedding (None: its default)


class SearchService:
    """The engine, opened on and used from one worker thread that batches waiting queries."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self._waiting: queue.Queue[_Job | None] = queue.Queue()
        self._engine: Engine | None = None
        self._reranker: Any = None
        opened: Future[None] = Future()
        self._worker = threading.Thread(
            target=self._work, args=(opened,), name="groove-search", daemon=True
        )
        self._worker.start()
        opened.result()  # raises what opening raised (no index, wrong model...)

    def _open(self) -> None:
        s = self.settings
        self._engine = open_engine(
            s.kb_path,
            db_path=s.db_path,
            model=s.model,
            model_path=s.model_path,
            config=s.config,
            threads=s.threads,
        )
        self._reranker = load_reranker(s.reranker)

    def search(self, query: str, limit: int) -> list[dict[str, Any]]:
        compiled = compile_query(query)  # a query groove cannot run fails here, alone
        job = _Job(query, limit, compiled, Future())
        self._waiting.put(job)
        return job.done.result()

    def close(self) -> None:
        self._waiting.put(None)
        self._worker.join()

    def _work(self, opened: Future[None]) -> None:
        try:
            self._open()
        except BaseException as exc:
            opened.set_exception(exc)
            return
        opened.set_result(None)
        engine = self._engine
        assert engine is not None
        try:
            while True:
                batch = self._next_batch()
                if not batch:
                    return
                self._run(engine, batch)
                if batch[-1] is None:
                    return
        finally:
            engine.close()

    def _next_batch(self) -> list[_Job | None]:
        """The next job (waiting for it), then every job already queued, up to BATCH_MAX."""
        batch = [self._waiting.get()]
        while batch[-1] is not None and len(batch) < BATCH_MAX:
            try:
                batch.append(self._waiting.get_nowait())
            except queue.Empty:
                break
        return batch

    def _run(self, engine: Engine, batch: list[_Job | None]) -> None:
        jobs = [job for job in batch if job is not None]
        if not jobs:
            return
        try:
            vectors = engine.embed_queries([job.compiled.positive_text for job in jobs])
        except BaseException as exc:
            for job in jobs:
                job.done.set_exception(exc)
            return
        # One read transaction per batch, as the in-process eval reads in one snapshot:
        # cheaper than a transaction per statement, and never held while idle.
        with read_snapshot(engine.conn) as conn:
            for job, vector in zip(jobs, vectors, strict=True):
                self._search_one(conn, job, vector)

    def _search_one(self, conn: Connection, job: _Job, vector: np.ndarray) -> None:
        try:
            options = replace(self.settings.options, limit=job.limit)
            result = search(conn, job.query, vector, options, self._reranker, job.compiled)
        except BaseException as exc:
            job.done.set_exception(exc)
            return
        hits = [{"path": h.path, "heading": h.heading, "score": h.score} for h in result.hits]
        job.done.set_result(hits)


@dataclass
class _Job:
    query: str
    limit: int
    compiled: CompiledQuery
    done: Future[list[dict[str, Any]]]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a client reuses its connections
    # Headers and body go out in two writes; with Nagle's algorithm the second waits for
    # the client's delayed ACK of the first (~40 ms on Linux) on every answer.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: one line per query would drown the terminal of a long eval."""

    def do_GET(self) -> None:
        if self.path.split("?")[0] == "/health":
            self._answer(200, {"status": "ok"})
        else:
            self._answer(404, {"error": "not found: POST /search or GET /health"})

    def do_POST(self) -> None:
        if self.path.split("?")[0] != "/search":
            self._answer(404, {"error": "not found: POST /search"})
            return
        try:
            request = self._request()
            hits = self.server.service.search(request["query"], request["limit"])
        except _BadRequest as exc:
            self._answer(400, {"error": str(exc)})
            return
        except GrooveError as exc:  # e.g. a query groove cannot run, a limit over the bound
            self._answer(400, {"error": spelled(exc, "serve")[0]})
            return
        except Exception as exc:  # the client gets a 500, the server keeps going
            self._answer(500, {"error": f"{type(exc).__name__}: {exc}"})
            return
        answer: dict[str, Any] = {"hits": hits}
        if "id" in request:
            answer = {"id": request["id"], **answer}
        self._answer(200, answer)

    def _request(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            raise _BadRequest(f"request body over {MAX_BODY_BYTES} bytes")
        return parse_request(self.rfile.read(length))

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _BadRequest(ValueError):
    pass


def parse_request(raw: bytes) -> dict[str, Any]:
    """A request body read by the contract: ``query``, ``limit`` (bounded) and ``id``.

    A key outside these is refused, so a misspelt ``limt`` is not silently the default."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise _BadRequest(f"the request is not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("query"), str):
        raise _BadRequest('expected {"query": "...", "limit": N}')
    unknown = sorted(set(data) - set(REQUEST_KEYS))
    if unknown:
        accepted = ", ".join(json.dumps(key) for key in REQUEST_KEYS)
        raise _BadRequest(f"unknown key {json.dumps(unknown[0])}; a request takes {accepted}")
    limit = data.get("limit", REQUEST_LIMIT.default)
    try:
        KINDS[REQUEST_LIMIT.kind].parse(limit, REQUEST_LIMIT.bounds)
    except Refused as bad:
        raise _BadRequest(f"limit must be {bad.wanted}") from None
    out = {"query": data["query"], "limit": at_most("limit", limit)}
    if "id" in data:
        out["id"] = data["id"]
    return out


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    service: SearchService

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the client hung up (e.g. an eval stopped at a fault): not our error
        super().handle_error(request, client_address)


def serve(settings: ServeSettings, *, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve until SIGINT or SIGTERM; ``on_ready(url)`` once it answers.

    The port is bound before the model loads, so a taken port is reported at once."""
    try:
        server = _Server((settings.host, settings.port), _Handler)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise GrooveError(
                literal(f"port {settings.port} on {settings.host} is already in use"),
                "pass {give} with a free port ({give:0} picks one)",
                setting="port",
            ) from None
        raise GrooveError(
            literal(f"cannot listen on {settings.host}:{settings.port}: {exc.strerror or exc}"),
            "check {host} and {port}",
            setting="port",
        ) from None
    with server:
        server.service = SearchService(settings)
        stop = _stop_on_signals(server)
        try:
            host, port = server.server_address[:2]
            if on_ready is not None:
                on_ready(f"http://{_host(str(host))}:{port}/search")
            server.serve_forever()
        finally:
            stop()
            server.service.close()


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _stop_on_signals(server: ThreadingHTTPServer) -> Callable[[], None]:
    """SIGINT / SIGTERM end ``serve_forever`` (from another thread: it blocks until done)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # signals reach the main thread only (e.g. a test's server)

    def handler(signum: int, frame: FrameType | None) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore
