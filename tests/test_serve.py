"""``groove serve``: groove's engine behind the retriever HTTP contract, on loopback.

The server is a real ``groove serve`` process on a free port of 127.0.0.1 (``--port 0``; the
port is read from its "listening on" line), over a real index and the real model. Measured
through it, the golden set must score exactly as the in-process eval scores it.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from groove.cli import cli
from groove.engine.serve import parse_request

STARTUP_SECONDS = 120


class Served:
    def __init__(self, kb: Path, *options: str) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from groove.cli import main; main()",
                "serve",
                "--kb-path",
                str(kb),
                "--port",
                "0",
                *options,
            ],
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        self.lines: queue.Queue[str] = queue.Queue()
        assert self.proc.stderr is not None
        threading.Thread(target=self._read, daemon=True).start()
        first = self.lines.get(timeout=STARTUP_SECONDS)
        assert first.startswith("groove serve: listening on http://127.0.0.1:"), first
        self.url = first.removeprefix("groove serve: listening on ").strip()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)
        self.proc.stderr.close()

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.proc.wait(timeout=30)
        rest = []
        while True:
            try:
                rest.append(self.lines.get(timeout=5))
            except queue.Empty:
                break
        return code, "".join(rest)


@pytest.fixture
def kb(indexed_kb) -> Path:  # type: ignore[no-untyped-def]
    return indexed_kb("kb_en")


@pytest.fixture
def served(kb: Path) -> Iterator[Served]:
    server = Served(kb)
    yield server
    server.stop()


def test_eval_through_groove_serve_equals_the_in_process_eval(
    served: Served, kb: Path, golden_en: Path
) -> None:
    runner = CliRunner()
    local = runner.invoke(cli, ["eval", "--kb-path", str(kb), "--golden", str(golden_en),
                                "--no-history", "--format", "json"])  # fmt: skip
    assert local.exit_code == 0, local.stderr
    remote = runner.invoke(cli, ["eval", "--retriever", served.url, "--kb-path", str(kb),
                                 "--golden", str(golden_en), "--no-history", "--format",
                                 "json"])  # fmt: skip
    assert remote.exit_code == 0, remote.stderr
    a, b = json.loads(local.stdout), json.loads(remote.stdout)
    assert b["aggregate"] == a["aggregate"]
    assert [q["top_k"] for q in b["per_query"]] == [q["top_k"] for q in a["per_query"]]
    assert b["corpus"] == a["corpus"]  # --kb-path points at the same index
    assert b["fingerprint"]["retriever"] == {"kind": "http", "name": served.url}
    assert a["fingerprint"].get("retriever") is None


def _top_k(*args: str) -> list[list[str]]:
    result = CliRunner().invoke(cli, ["eval", *args, "--no-history", "--format", "json"])
    assert result.exit_code == 0, result.stderr
    return [q["top_k"] for q in json.loads(result.stdout)["per_query"]]


@pytest.mark.slow
def test_serve_searches_the_lexical_index_it_is_given(kb: Path, golden_en: Path) -> None:
    base = ["--kb-path", str(kb), "--golden", str(golden_en)]
    trigram, porter = _top_k(*base, "--lexical", "trigram"), _top_k(*base, "--lexical", "porter")
    assert trigram != porter  # the fixture tells the two indexes apart
    server = Served(kb, "--lexical", "trigram")
    try:
        assert _top_k(*base, "--retriever", server.url) == trigram
    finally:
        server.stop()


def test_serve_answers_the_contract_and_refuses_bad_requests(served: Served) -> None:
    base = served.url.removesuffix("/search")
    with httpx.Client(trust_env=False) as client:
        assert client.get(f"{base}/health").json() == {"status": "ok"}
        answer = client.post(served.url, json={"id": "q1", "query": "canary traffic", "limit": 3})
        assert answer.status_code == 200
        body = answer.json()
        assert body["id"] == "q1" and 1 <= len(body["hits"]) <= 3
        assert {"path", "heading", "score"} == set(body["hits"][0])
        bad = client.post(served.url, content=b"{nope")
        assert bad.status_code == 400 and "not JSON" in bad.json()["error"]
        empty = client.post(served.url, json={"query": "   "})
        assert empty.status_code == 400 and empty.json()["error"] == "empty query"
        at = client.post(served.url, json={"query": "canary", "limit": 10_000})
        assert at.status_code == 200  # the bound itself is kept, not lowered
        over = client.post(served.url, json={"query": "canary", "limit": 10_001})
        assert over.status_code == 400  # the one rule for a limit (groove.settings.at_most)
        assert over.json()["error"] == '"limit" 10001 exceeds the supported maximum 10000'
        typo = client.post(served.url, json={"query": "canary", "limt": 5})
        assert typo.status_code == 400  # not a silent default limit
        assert typo.json() == {"error": UNKNOWN_LIMT}
        assert client.post(f"{base}/other", json={}).status_code == 404


UNKNOWN_LIMT = 'unknown key "limt"; a request takes "query", "limit", "id"'


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"query": "canary", "limt": 5}, UNKNOWN_LIMT),
        ({"query": "canary", "limit": 3, "zeta": 1, "alpha": 2}, 'unknown key "alpha"'),
    ],
)
def test_a_request_key_outside_the_contract_is_refused_by_name(
    body: dict[str, object], error: str
) -> None:
    with pytest.raises(ValueError) as refused:
        parse_request(json.dumps(body).encode())
    assert str(refused.value).startswith(error)


def test_a_request_of_the_contract_keys_is_read() -> None:
    assert parse_request(b'{"query": "canary", "limit": 3, "id": "q1"}') == {
        "query": "canary",
        "limit": 3,
        "id": "q1",
    }
    assert parse_request(b'{"query": "canary"}') == {"query": "canary", "limit": 10}


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_stops_cleanly_on_a_signal(kb: Path, sig: int) -> None:
    server = Served(kb)
    code, rest = server.stop(sig)
    assert code == 0
    assert rest == "groove serve: stopped\n"


def test_a_taken_port_is_a_one_line_error(kb: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["serve", "--kb-path", str(kb), "--port", str(port)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: port {port} on 127.0.0.1 is already in use\n"
        "hint: pass --port with a free port (--port 0 picks one)\n"
    )
