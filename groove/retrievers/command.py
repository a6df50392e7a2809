"""``command:PROGRAM [ARGS...]``: one process, one JSON line in and one out per query.

groove starts the program once, writes ``{"id", "query", "limit"}`` to its standard input
and waits up to the timeout for the answer line ``{"id", "hits"}`` before sending the next
query. The program's standard error is groove's. Closing its standard input asks it to
end; one that does not within a few seconds is terminated, then killed.
"""

from __future__ import annotations

import json
import queue
import shlex
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import IO, Any

from groove.errors import RetrieverError, literal
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
from groove.settings import cli_flag, command_line

EXIT_GRACE_SECONDS = 5.0
_EOF = b""


class CommandRetriever:
    kind = "command"

    def __init__(self, spec: RetrieverSpec) -> None:
        self.name = spec.name
        self.argv = shlex.split(spec.target)
        self.timeout = spec.options.timeout
        self.notes: list[Note] = []
        self.legs: dict[str, QueryLegs] = {}  # query id -> the answer's legs, when it has them
        self.timings: dict[str, QueryTiming] = {}  # query id -> request to answer line
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._reader: threading.Thread | None = None

    def retrieve(
        self, queries: Sequence[RetrieverQuery], progress: ProgressFn | None = None
    ) -> list[tuple[RankedHit, ...]]:
        proc = self._start()
        assert proc.stdin is not None
        out = []
        for done, q in enumerate(queries, start=1):
            request = {"id": q.id, "query": q.query, "limit": q.limit}
            start = time.perf_counter()
            self._send(proc.stdin, json.dumps(request, ensure_ascii=False), q.id)
            answer = self._answer(q.id)
            self.timings[q.id] = QueryTiming(time.perf_counter() - start)
            out.append(parse_hits(answer, q.id, q.limit))
            legs = parse_legs(answer, q.id)
            if legs is not None:
                self.legs[q.id] = legs
            if progress is not None:
                progress(done, len(queries))
        return out

    def close(self) -> None:
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass  # it already went away; wait() below collects it
        try:
            proc.wait(timeout=EXIT_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=EXIT_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=EXIT_GRACE_SECONDS)
        if proc.stdout is not None:
            proc.stdout.close()

    def _start(self) -> subprocess.Popen[bytes]:
        try:
            proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None
            )
        except OSError as exc:
            raise RetrieverError(
                f"cannot start the retriever command {self.argv[0]!r}: {exc.strerror or exc}",
                "check the program after command: (is it installed and executable?)",
            ) from None
        self._proc = proc
        assert proc.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(proc.stdout,), daemon=True)
        self._reader.start()
        return proc

    def _read(self, stream: IO[bytes]) -> None:
        # A thread of its own, so that waiting for an answer can time out.
        try:
            for line in stream:
                self._lines.put(line)
        except ValueError:
            pass  # closed under it by close() after a timeout
        self._lines.put(_EOF)

    def _send(self, stdin: IO[bytes], line: str, query_id: str) -> None:
        try:
            stdin.write(line.encode("utf-8") + b"\n")
            stdin.flush()
        except OSError:
            raise self._exited(query_id) from None

    def _answer(self, query_id: str) -> Any:
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            self._kill()
            raise RetrieverError(
                literal(
                    f"retriever command gave no answer for query {query_id!r} "
                    f"within {self.timeout:g}s"
                ),
                "raise {setting}, or check that the program answers every line "
                "(and flushes its output)",
                setting="retriever_timeout",
            ) from None
        if line == _EOF:
            raise self._exited(query_id)
        try:
            answer = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            raise violation(query_id, "the answer line is not UTF-8") from None
        except json.JSONDecodeError as exc:
            raise violation(
                query_id, f"the answer line is not JSON ({exc.msg} at column {exc.colno})"
            ) from None
        if not isinstance(answer, dict):
            raise violation(query_id, f"expected a JSON object, got {type(answer).__name__}")
        got = answer.get("id")
        if got is None:
            raise violation(query_id, "the answer has no `id`")
        if str(got) != query_id:
            raise violation(query_id, f"answered id {str(got)!r}, which was not asked")
        return answer

    def _exited(self, query_id: str) -> RetrieverError:
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=EXIT_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                self._kill()
        how = f"exited with code {code}" if code is not None else "closed its output"
        return RetrieverError(
            f"retriever command {how} before answering query {query_id!r}",
            "its standard error may say why: a terminal shows it just before this message; "
            f"a notebook does not, so run {command_line('eval')} with the same "
            f"{cli_flag('retriever')} in a terminal",
        )

    def _kill(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
