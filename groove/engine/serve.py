"""``groove serve``: groove's own engine behind the retriever HTTP contract.

``POST /search`` with ``{"query": "...", "limit": 10}`` (``limit`` optional, ``id`` echoed
back when given) answers ``{"hits": [{"path", "heading", "score"}, ...]}``, best first: the
same pipeline, options and index as ``groove search`` and ``groove eval``. ``GET /health``
answers ``{"status": "ok"}``. A bad request gets a 4xx answer with ``{"error": "..."}``.

Requests are accepted on many threads but searched on one: the SQLite connection and the
model belong to a single worker thread, which also keeps the answers identical to the
in-process eval's (same connection, same order of work).
"""

from __future__ import annotations

import errno
import json
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType
from typing import Any

from groove.config import Config
from groove.engine.query import compile_query
from groove.engine.rerank import load_reranker
from groove.engine.search import SEARCH_LIMIT_MAX, SearchOptions, search
from groove.engine.session import Engine, open_engine
from groove.errors import GrooveError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MAX_BODY_BYTES = 1 << 20


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


class SearchService:
    """The engine, opened on and used from one worker thread."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="groove-search")
        self._engine: Engine | None = None
        self._reranker: Any = None
        try:
            self._pool.submit(self._open).result()
        except BaseException:
            self._pool.shutdown()
            raise

    def _open(self) -> None:
        s = self.settings
        self._engine = open_engine(
            s.kb_path, db_path=s.db_path, model=s.model, model_path=s.model_path, config=s.config
        )
        self._reranker = load_reranker(s.reranker)

    def search(self, query: str, limit: int) -> list[dict[str, Any]]:
        return self._pool.submit(self._search, query, limit).result()

    def _search(self, query: str, limit: int) -> list[dict[str, Any]]:
        engine = self._engine
        assert engine is not None
        compiled = compile_query(query)
        vector = engine.embed_queries([compiled.positive_text])[0]
        options = replace(self.settings.options, limit=limit)
        result = search(engine.conn, query, vector, options, self._reranker, compiled)
        return [{"path": h.path, "heading": h.heading, "score": h.score} for h in result.hits]

    def close(self) -> None:
        def close_engine() -> None:
            if self._engine is not None:
                self._engine.close()

        self._pool.submit(close_engine).result()
        self._pool.shutdown()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a client reuses its connections
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
        except GrooveError as exc:  # e.g. a query groove cannot run
            self._answer(400, {"error": exc.message})
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
        raw = self.rfile.read(length)
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise _BadRequest(f"the request is not JSON ({exc})") from None
        if not isinstance(data, dict) or not isinstance(data.get("query"), str):
            raise _BadRequest('expected {"query": "...", "limit": N}')
        limit = data.get("limit", 10)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise _BadRequest("limit must be a whole number >= 1")
        out = {"query": data["query"], "limit": min(limit, SEARCH_LIMIT_MAX)}
        if "id" in data:
            out["id"] = data["id"]
        return out

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _BadRequest(ValueError):
    pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    service: SearchService


def serve(settings: ServeSettings, *, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve until SIGINT or SIGTERM; ``on_ready(url)`` once the port is bound."""
    service = SearchService(settings)
    try:
        try:
            server = _Server((settings.host, settings.port), _Handler)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise GrooveError(
                    f"port {settings.port} on {settings.host} is already in use",
                    "pass --port with a free port (--port 0 picks one)",
                ) from None
            raise GrooveError(
                f"cannot listen on {settings.host}:{settings.port}: {exc.strerror or exc}",
                "check --host and --port",
            ) from None
        server.service = service
        with server:
            stop = _stop_on_signals(server)
            try:
                host, port = server.server_address[:2]
                if on_ready is not None:
                    on_ready(f"http://{_host(str(host))}:{port}/search")
                server.serve_forever()
            finally:
                stop()
    finally:
        service.close()


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
