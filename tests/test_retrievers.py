"""``groove eval --retriever``: command, HTTP and run-file retrievers, and their faults.

The retrievers here are real: a subprocess speaking JSON lines (tests/helpers/adapter.py),
HTTP servers on 127.0.0.1 (free ports only) and run files on disk. Their hits are made up
so that the metrics are known in advance: every golden query's answer sits at rank 2 under
a decoy, so MRR is exactly 0.5 and recall@1 exactly 0. Every fault must exit 2 with a
one-line message naming the query and leave the history file byte for byte as it was.
"""

from __future__ import annotations

import json
import math
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from groove.cli import cli
from groove.retrievers.identity import content_hash

ADAPTER = Path(__file__).parent / "helpers" / "adapter.py"
DECOY = "team/postmortem.md"


def invoke(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), env=env)


@pytest.fixture
def golden(tmp_path: Path, golden_en: Path) -> Path:
    """A private copy of golden_en: without --kb-path the history is kept beside it."""
    path = tmp_path / "golden.yml"
    path.write_bytes(golden_en.read_bytes())
    return path


def made_up_hits(golden: Path) -> dict[str, list[dict[str, Any]]]:
    """Per query: a decoy first, the expected answer second, then one more decoy."""
    out = {}
    for q in yaml.safe_load(golden.read_text())["queries"]:
        expected = q["expected"][0]
        out[q["id"]] = [
            {"path": DECOY, "heading": None, "score": 0.9},
            {"path": expected["path"], "heading": expected.get("heading"), "score": 0.8},
            {"path": "archive/old.md", "score": 0.1},
        ]
    return out


@pytest.fixture
def run_jsonl(tmp_path: Path, golden: Path) -> Path:
    path = tmp_path / "run.jsonl"
    lines = [json.dumps({"id": qid, "hits": hits}) for qid, hits in made_up_hits(golden).items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def assert_known_metrics(doc: dict[str, Any]) -> None:
    agg = doc["aggregate"]
    assert agg["query_count"] == 10
    assert agg["mrr"] == 0.5
    assert agg["recall_at_k"] == {"1": 0.0, "5": 1.0, "10": 1.0}
    assert math.isclose(agg["ndcg_at_k"]["10"], 1 / math.log2(3))


def command_spec(run: Path, *extra: str) -> str:
    return f"command:{sys.executable} {ADAPTER} {run} {' '.join(extra)}".strip()


# ------------------------------------------------------------------- spec and fingerprint


def test_spec_names_hide_credentials_and_headers_expand_only_at_open() -> None:
    from groove.errors import ConfigError
    from groove.retrievers.http import expand_headers
    from groove.retrievers.spec import RetrieverOptions, parse_spec

    spec = parse_spec("https://bob:s3cret@search.example.com:9200/idx/_search?api_key=k#x")
    assert (spec.kind, spec.name) == ("http", "https://search.example.com:9200/idx/_search")
    # Another request body on the same endpoint is another system.
    bodies = ['{"query": {"match": {"body": "{{query}}"}}}', '{"query": "{{query}}"}']
    names = {parse_spec(spec.target, options=RetrieverOptions(body=b)).name for b in bodies}
    assert len(names) == 2
    assert all(n.startswith("https://search.example.com:9200/idx/_search #") for n in names)
    # No file named "my adapter.py" here: the command line alone, re-quoted.
    assert parse_spec("command:python 'my adapter.py' --fast").name == (
        "python 'my adapter.py' --fast"
    )
    assert parse_spec("run:./out/bm25.trec").name == "out/bm25.trec"
    assert parse_spec("run:x", name="bm25 baseline").fingerprint() == {
        "kind": "run",
        "name": "bm25 baseline",
    }
    with pytest.raises(ConfigError, match="unknown retriever 'ftp://x'"):
        parse_spec("ftp://x")
    assert expand_headers(["Authorization: Bearer $TOKEN"], {"TOKEN": "t0k"}) == {
        "Authorization": "Bearer t0k"
    }
    with pytest.raises(ConfigError, match=r"uses \$TOKEN, which is not set"):
        expand_headers(["Authorization: Bearer ${TOKEN}"], {})


def test_old_history_entries_read_as_groove_engine() -> None:
    from groove.runs.fingerprint import Fingerprint

    old = {
        "model": "m",
        "reranker": None,
        "limit": 10,
        "k_values": [1, 5, 10],
        "golden_hash": "h",
        "metric_version": 2,
        "fts_query_version": 1,
    }
    engine = Fingerprint.from_dict(old)
    # The lexical mode (issue 14) is always written; an old entry reads as the trigram leg.
    assert engine.retriever is None and engine.to_dict() == {**old, "lexical": "trigram"}
    external = Fingerprint.from_dict({**old, "retriever": {"kind": "http", "name": "u"}})
    assert not external.compatible_with(engine)


# ------------------------------------------------------------ real retrievers, known metrics


def test_command_adapter_and_both_run_file_formats_score_the_same(
    tmp_path: Path, golden: Path, run_jsonl: Path
) -> None:
    docs = {}
    trec = tmp_path / "run.trec"
    for kind, spec in (
        ("command", command_spec(run_jsonl)),
        ("jsonl", f"run:{run_jsonl}"),
    ):
        result = invoke("eval", "--retriever", spec, "--golden", str(golden), "--no-history",
                        "--format", "json", "--export-run", str(trec),
                        "--export-run-headings")  # fmt: skip
        assert result.exit_code == 0, result.stderr
        docs[kind] = json.loads(result.stdout)
    result = invoke("eval", "--retriever", f"run:{trec}", "--golden", str(golden),
                    "--no-history", "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    docs["trec"] = json.loads(result.stdout)
    for doc in docs.values():
        assert_known_metrics(doc)
    # The whole command line, and one hash over the files among its arguments (the
    # adapter and the run file it reads; the interpreter is a program, not a script).
    files = [ADAPTER, run_jsonl]
    assert docs["command"]["fingerprint"]["retriever"] == {
        "kind": "command",
        "name": f"{sys.executable} {ADAPTER} {run_jsonl} #{content_hash(files)}",
    }
    assert docs["trec"]["fingerprint"]["retriever"] == {
        "kind": "run",
        "name": f"{trec.as_posix()} #{content_hash([trec])}",
    }
    tops = {k: [q["top_k"] for q in d["per_query"]] for k, d in docs.items()}
    assert tops["command"] == tops["jsonl"] == tops["trec"]
    assert "corpus drift and the golden-leak check are not available" in result.stderr
    assert docs["trec"]["corpus"] is None


def test_trec_run_orders_by_rank_and_reads_escaped_ids(tmp_path: Path, golden: Path) -> None:
    from groove.golden.qrels import docid

    assert docid("my notes/a#b.md", "Set up 100%") == "my%20notes/a%23b.md#Set%20up%20100%25"
    run = tmp_path / "run.trec"
    lines = []
    for qid, hits in made_up_hits(golden).items():
        for rank, hit in reversed(list(enumerate(hits, start=1))):  # file order != rank order
            lines.append(f"{qid} Q0 {docid(hit['path'], hit.get('heading'))} {rank} 1.0 t")
    run.write_text("\n".join(lines) + "\n")
    result = invoke("eval", "--retriever", f"run:{run}", "--golden", str(golden),
                    "--no-history", "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert_known_metrics(json.loads(result.stdout))


def test_retriever_runs_share_history_only_with_the_same_retriever(
    golden: Path, run_jsonl: Path, tmp_path: Path
) -> None:
    history = golden.parent / ".groove-eval-history.json"
    first = invoke("eval", "--retriever", f"run:{run_jsonl}", "--golden", str(golden))
    assert first.exit_code == 0, first.stderr
    assert history.is_file()
    same = invoke("eval", "--retriever", f"run:{run_jsonl}", "--golden", str(golden))
    assert "Aggregate (previous run:" in same.stdout
    other = invoke("eval", "--retriever", command_spec(run_jsonl), "--golden", str(golden))
    assert other.exit_code == 0, other.stderr
    assert "retriever changed since last run, diff disabled" in other.stdout
    runs = json.loads(history.read_text())["runs"]
    assert [r["fingerprint"]["retriever"]["kind"] for r in runs] == [
        "command",
        "run",
        "run",
    ]  # newest first


def test_two_scripts_under_one_interpreter_are_two_retrievers(
    golden: Path, run_jsonl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 18: ``python3 a.py`` and ``python3 b.py`` were both recorded as ``python3`` and
    gated against each other; an edited script was the same system as before."""
    monkeypatch.chdir(tmp_path)
    misses = tmp_path / "misses.jsonl"
    misses.write_text(
        "".join(json.dumps({"id": q, "hits": []}) + "\n" for q in made_up_hits(golden))
    )
    for script in ("a.py", "b.py"):
        (tmp_path / script).write_bytes(ADAPTER.read_bytes())
    python = sys.executable

    def run(script: str, answers: Path, *extra: str):  # type: ignore[no-untyped-def]
        return invoke("eval", "--retriever", f"command:{python} {script} {answers.name}",
                      "--golden", str(golden), "--format", "json", "--fail-on-regression",
                      *extra)  # fmt: skip

    good = run("a.py", run_jsonl)
    assert good.exit_code == 0, good.stderr
    again = run("a.py", run_jsonl)  # the same script again: the same system, diffed
    assert json.loads(again.stdout)["diff"] is not None
    bad = run("b.py", misses)  # every query missed: a regression if it were compared
    assert bad.exit_code == 0, bad.stderr
    doc = json.loads(bad.stdout)
    assert doc["diff"] is None
    assert doc["fingerprint"]["retriever"]["name"].startswith(f"{python} b.py misses.jsonl #")
    # An edited script is another system; --retriever-name keeps one name across edits.
    (tmp_path / "a.py").write_text(ADAPTER.read_text() + "# tuned\n")
    edited = run("a.py", run_jsonl)
    assert json.loads(edited.stdout)["diff"] is None
    named = run("a.py", run_jsonl, "--retriever-name", "adapter")
    assert named.exit_code == 0, named.stderr
    (tmp_path / "a.py").write_text(ADAPTER.read_text() + "# tuned again\n")
    fell = run("a.py", misses, "--retriever-name", "adapter")
    assert fell.exit_code == 1  # the named system fell: gated against its own last run
    assert json.loads(fell.stdout)["fingerprint"]["retriever"]["name"] == "adapter"


def test_runs_recorded_under_the_old_short_name_are_another_configuration(
    golden: Path, run_jsonl: Path
) -> None:
    spec = command_spec(run_jsonl)
    # A history entry as older groove wrote it: the program alone.
    old = invoke("eval", "--retriever", spec, "--golden", str(golden),
                 "--retriever-name", sys.executable)  # fmt: skip
    assert old.exit_code == 0, old.stderr
    new = invoke("eval", "--retriever", spec, "--golden", str(golden), "--fail-on-regression")
    assert new.exit_code == 0, new.stderr
    assert (
        f"retriever changed since last run (recorded as {sys.executable!r} before groove named "
        "a command retriever in full: a new configuration), diff disabled"
    ) in new.stdout


def test_engine_flags_and_tune_refuse_a_retriever(golden: Path, run_jsonl: Path) -> None:
    mixed = invoke("eval", "--retriever", f"run:{run_jsonl}", "--golden", str(golden), "--mmr",
                   "true")  # fmt: skip
    assert mixed.exit_code == 2
    assert "--mmr configures groove's own engine and cannot be combined with --retriever" in (
        mixed.stderr
    )
    lonely = invoke("eval", "--retriever-timeout", "3", "--golden", str(golden))
    assert lonely.exit_code == 2 and "--retriever-timeout needs --retriever" in lonely.stderr
    no_golden = invoke("eval", "--retriever", f"run:{run_jsonl}")
    assert no_golden.exit_code == 2
    assert "with --retriever and no --kb-path, groove needs --golden" in no_golden.stderr
    # tune re-fuses a retriever's legs: one whose answers carry none is refused
    tune = invoke("tune", "--retriever", f"run:{run_jsonl}", "--golden", str(golden))
    assert tune.exit_code == 2
    assert "without `legs`" in tune.stderr


def test_explain_without_legs_is_refused_and_nothing_is_written(
    tmp_path: Path, golden: Path, run_jsonl: Path
) -> None:
    import groove
    from groove.notebooks import kernel

    history = golden.parent / ".groove-eval-history.json"
    first = invoke("eval", "--retriever", f"run:{run_jsonl}", "--golden", str(golden))
    assert first.exit_code == 0, first.stderr
    before = history.read_bytes()
    # the first query's answer loses its expected hit: a miss to explain, with no legs
    lines = run_jsonl.read_text().splitlines()
    answer = json.loads(lines[0])
    answer["hits"] = answer["hits"][:1]
    missing = tmp_path / "missing.jsonl"
    missing.write_text("\n".join([json.dumps(answer), *lines[1:]]) + "\n")
    qid = answer["id"]
    refused = invoke("eval", "--retriever", f"run:{missing}", "--golden", str(golden),
                     "--explain", "--export-run", str(tmp_path / "run.trec"))  # fmt: skip
    assert (refused.exit_code, refused.stdout) == (2, "")
    assert refused.stderr == (
        f"Error: --explain with --retriever needs the legs of each answer; query {qid!r} came "
        "back without `legs`\n"
        "hint: the retriever must answer with `legs` (docs/retrievers.md#per-leg-results-legs)\n"
    )
    # each face names the settings its own way (groove.errors: a library error names them)
    with pytest.raises(groove.RetrieverError) as info:
        groove.evaluate(None, golden, retriever=f"run:{missing}", explain=True,
                        save_history=True)  # fmt: skip
    assert str(info.value) == (
        "keyword explain with keyword retriever needs the legs of each answer; query "
        f"{qid!r} came back without `legs`"
    )
    outcome = kernel.eval_report(
        golden=str(golden),
        retriever=f"run:{missing}",
        explain=True,
        result_path=str(tmp_path / "result.json"),
    )
    assert outcome.exit_code == 2 and str(outcome.error) == (
        "parameter explain with parameter retriever needs the legs of each answer; query "
        f"{qid!r} came back without `legs`"
    )
    assert history.read_bytes() == before
    assert not (tmp_path / "run.trec").exists()


def test_notebook_kernel_takes_a_retriever(tmp_path: Path, golden: Path, run_jsonl: Path) -> None:
    from groove.notebooks import kernel

    outcome = kernel.eval_report(
        golden=str(golden),
        retriever=f"run:{run_jsonl}",
        retriever_options={"name": "baseline"},
        history=False,
        result_path=str(tmp_path / "result.json"),
    )
    assert outcome.ok, outcome.error
    document = json.loads((tmp_path / "result.json").read_text())
    assert document["fingerprint"]["retriever"] == {"kind": "run", "name": "baseline"}
    assert_known_metrics(document)
    refused = kernel.eval_report(
        golden=str(golden),
        retriever=f"run:{run_jsonl}",
        retriever_options={"colour": "red"},
        result_path=str(tmp_path / "refused.json"),
    )
    assert refused.exit_code == 2 and "unknown key 'colour'" in str(refused.error)
    named = kernel.eval_report(
        golden=str(golden),
        retriever=f"run:{run_jsonl}",
        retriever_name="bm25",
        history=False,
        result_path=str(tmp_path / "named.json"),
    )
    assert named.ok, named.error
    named_doc = json.loads((tmp_path / "named.json").read_text())
    assert named_doc["fingerprint"]["retriever"] == {"kind": "run", "name": "bm25"}


# ------------------------------------------------------------------------ command faults


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (
            "exit",
            "retriever command exited with code 3 before answering query 'canary-first-share'",
        ),
        ("hang", "retriever command gave no answer for query 'canary-first-share' within 1s"),
        (
            "malformed",
            "retriever answer for query 'canary-first-share': the answer line is not JSON",
        ),
        ("no-path", "retriever answer for query 'canary-first-share': hit 1 has no `path`"),
        (
            "wrong-id",
            "retriever answer for query 'canary-first-share': answered id 'someone-else', "
            "which was not asked",
        ),
    ],
)
def test_command_faults_exit_2_and_keep_the_history(
    golden: Path, run_jsonl: Path, fault: str, message: str
) -> None:
    history = golden.parent / ".groove-eval-history.json"
    first = invoke("eval", "--retriever", command_spec(run_jsonl), "--golden", str(golden))
    assert first.exit_code == 0, first.stderr
    before = history.read_bytes()
    spec = command_spec(run_jsonl, "--fault", fault, "--at", "3")
    result = invoke("eval", "--retriever", spec, "--golden", str(golden),
                    "--retriever-timeout", "1")  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.splitlines()[0] == f"Error: {message}" or (
        result.stderr.splitlines()[0].startswith(f"Error: {message}")
    )
    assert history.read_bytes() == before


def test_a_program_that_cannot_start_is_a_one_line_error(golden: Path) -> None:
    result = invoke("eval", "--retriever", "command:/nonexistent/adapter", "--golden", str(golden))
    assert result.exit_code == 2
    assert "Error: cannot start the retriever command '/nonexistent/adapter'" in result.stderr


# --------------------------------------------------------------------------- HTTP faults


class QuietServer(ThreadingHTTPServer):
    """A client that gave up (groove stopping at a fault) is no error worth printing: it
    would land in the stderr of whichever command CliRunner is capturing at that moment."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class FakeService:
    """A loopback HTTP retriever whose answers the test decides, one query at a time."""

    def __init__(self, answer: Callable[[dict[str, Any], int], tuple[int, bytes]]) -> None:
        self.answer = answer
        self.calls: dict[str, int] = {}
        self.headers: list[str | None] = []
        self.lock = threading.Lock()
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                key = json.dumps(body["query"])
                with service.lock:
                    n = service.calls[key] = service.calls.get(key, 0) + 1
                    service.headers.append(self.headers.get("Authorization"))
                status, payload = service.answer(body, n)
                self.send_response(status)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/search"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_service(golden: Path) -> Iterator[Callable[..., FakeService]]:
    made: list[FakeService] = []
    hits = made_up_hits(golden)
    by_query = {q["query"]: q["id"] for q in yaml.safe_load(golden.read_text())["queries"]}

    def make(fault: Callable[[str, int], tuple[int, bytes] | None] | None = None) -> FakeService:
        def answer(body: dict[str, Any], n: int) -> tuple[int, bytes]:
            qid = by_query[body["query"]]
            if fault is not None:
                faulty = fault(qid, n)
                if faulty is not None:
                    return faulty
            return 200, json.dumps({"hits": hits[qid][: body["limit"]]}).encode()

        service = FakeService(answer)
        made.append(service)
        return service

    yield make
    for service in made:
        service.close()


SLOW = threading.Event()  # never set: a wait on it is a server slower than any timeout


def _slow(qid: str, n: int) -> tuple[int, bytes] | None:
    if qid == "canary-first-share":
        SLOW.wait(5)
    return None


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (_slow, "retriever gave no answer for query 'canary-first-share' within 1s"),
        (
            lambda qid, n: (200, b"{oops") if qid == "canary-first-share" else None,
            "retriever answer for query 'canary-first-share': the answer is not JSON",
        ),
        (
            lambda qid, n: (
                (200, b'{"hits": [{"score": 1}]}') if qid == "canary-first-share" else None
            ),
            "retriever answer for query 'canary-first-share': hit 1 has no `path`",
        ),
        (
            lambda qid, n: (503, b"busy") if qid == "canary-first-share" else None,
            "retriever request for query 'canary-first-share' failed after 2 attempt(s): "
            "HTTP 503 Service Unavailable",
        ),
        (
            lambda qid, n: (404, b"") if qid == "canary-first-share" else None,
            "retriever request for query 'canary-first-share' failed: HTTP 404 Not Found",
        ),
        (  # groove serve's refusal names the key: the user must see it, not a bare 400
            lambda qid, n: (
                (400, b'{"error": "unknown key \\"size\\"; a request takes \\"query\\""}')
                if qid == "canary-first-share"
                else None
            ),
            "retriever request for query 'canary-first-share' failed: HTTP 400 Bad Request "
            '(unknown key "size"; a request takes "query")\n',
        ),
    ],
    ids=[
        "slower-than-timeout",
        "malformed-json",
        "hit-without-path",
        "5xx-exhausted",
        "4xx",
        "4xx-with-reason",
    ],
)
def test_http_faults_exit_2_and_keep_the_history(
    golden: Path,
    run_jsonl: Path,
    fake_service: Callable[..., FakeService],
    fault: Any,
    message: str,
) -> None:
    history = golden.parent / ".groove-eval-history.json"
    service = fake_service(fault)
    first = invoke("eval", "--retriever", f"run:{run_jsonl}", "--golden", str(golden),
                   "--retriever-name", service.url)  # fmt: skip
    assert first.exit_code == 0, first.stderr
    before = history.read_bytes()
    result = invoke("eval", "--retriever", service.url, "--golden", str(golden),
                    "--retriever-timeout", "1", "--retriever-retries", "1")  # fmt: skip
    assert result.exit_code == 2, result.output
    assert (result.stderr.splitlines()[0] + "\n").startswith(f"Error: {message}"), result.stderr
    assert len(result.stderr.splitlines()) == 2  # the message and its hint
    assert history.read_bytes() == before


def test_http_5xx_then_success_is_retried_and_headers_stay_out_of_history(
    golden: Path, fake_service: Callable[..., FakeService]
) -> None:
    service = fake_service(lambda qid, n: (502, b"") if n == 1 else None)
    result = invoke("eval", "--retriever", service.url, "--golden", str(golden),
                    "--retriever-header", "Authorization: Bearer $GROOVE_TEST_TOKEN",
                    "--format", "json", env={"GROOVE_TEST_TOKEN": "tok-123"})  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert_known_metrics(json.loads(result.stdout))
    assert set(service.calls.values()) == {2}  # every query: one 502, then the answer
    assert set(service.headers) == {"Bearer tok-123"}
    history = (golden.parent / ".groove-eval-history.json").read_text()
    assert "tok-123" not in history and "GROOVE_TEST_TOKEN" not in history


def test_http_connection_refused_exits_2_and_keeps_the_history(golden: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again at once: nothing listens there
    result = invoke("eval", "--retriever", f"http://127.0.0.1:{port}/search", "--golden",
                    str(golden), "--retriever-retries", "1")  # fmt: skip
    assert result.exit_code == 2
    first = result.stderr.splitlines()[0]
    assert first.startswith("Error: retriever request for query '")
    assert "failed after 2 attempt(s): cannot connect" in first
    assert not (golden.parent / ".groove-eval-history.json").exists()


def test_opensearch_answers_are_read_through_the_field_map(
    golden: Path, fake_service: Callable[..., FakeService]
) -> None:
    hits = made_up_hits(golden)
    by_query = {q["query"]: q["id"] for q in yaml.safe_load(golden.read_text())["queries"]}
    seen: list[dict[str, Any]] = []

    def opensearch(body: dict[str, Any], n: int) -> tuple[int, bytes]:
        seen.append(body)
        qid = by_query[body["query"]["match"]["body"]]
        found = [{"_score": h["score"], "_source": {"file": h["path"], "section": h.get(
            "heading")}} for h in hits[qid]]  # fmt: skip
        return 200, json.dumps({"took": 1, "hits": {"total": 3, "hits": found}}).encode()

    service = FakeService(opensearch)
    try:
        result = invoke("eval", "--retriever", service.url, "--golden", str(golden),
                        "--retriever-body", '{"size": "{{limit}}", "query": {"match": {"body": '
                        '"{{query}}"}}}', "--retriever-hits", "hits.hits", "--retriever-field",
                        "path=_source.file", "--retriever-field", "heading=_source.section",
                        "--retriever-field", "score=_score", "--format", "json")  # fmt: skip
    finally:
        service.close()
    assert result.exit_code == 0, result.stderr
    assert_known_metrics(json.loads(result.stdout))
    assert {b["size"] for b in seen} == {10}


def test_groove_evaluate_takes_a_retriever(golden: Path, run_jsonl: Path) -> None:
    import groove

    run = groove.evaluate(
        None,
        golden,
        retriever=f"run:{run_jsonl}",
        retriever_options={"name": "baseline", "timeout": 5},
    )
    assert run.fingerprint.retriever == {"kind": "run", "name": "baseline"}
    assert run.record.aggregate.mrr == 0.5
    assert not (golden.parent / ".groove-eval-history.json").exists()  # save_history=False
    with pytest.raises(groove.ConfigError) as lonely:
        groove.evaluate(None, golden, retriever_options={"name": "x"})
    assert (lonely.value.message, lonely.value.hint) == (
        "keyword retriever_options needs keyword retriever",
        "pass retriever=SPEC as well",
    )
    named = groove.evaluate(None, golden, retriever=f"run:{run_jsonl}", retriever_name="bm25")
    assert named.fingerprint.retriever == {"kind": "run", "name": "bm25"}
    with pytest.raises(groove.ConfigError, match="keyword retriever_name needs keyword retriever"):
        groove.evaluate(None, golden, retriever_name="bm25")
    with pytest.raises(groove.ConfigError, match="'bm25' and retriever_options name 'x' disagree"):
        groove.evaluate(None, golden, retriever=f"run:{run_jsonl}", retriever_name="bm25",
                        retriever_options={"name": "x"})  # fmt: skip


# ------------------------------------------------------------------- plausibility (issue 18)


def _run_file(path: Path, golden: Path, rewrite: Callable[[str], str]) -> Path:
    lines = [
        json.dumps({"id": qid, "hits": [{**h, "path": rewrite(h["path"])} for h in hits]})
        for qid, hits in made_up_hits(golden).items()
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_absolute_hit_paths_are_reported_with_examples_and_the_fix(
    tmp_path: Path,
    golden: Path,
    indexed_kb,  # type: ignore[no-untyped-def]
) -> None:
    """Issue 18: a retriever returning absolute paths scored 0.000 everywhere, exit 0, and
    nothing said that none of its paths was indexed."""
    kb = indexed_kb("kb_en")
    run = _run_file(tmp_path / "abs.jsonl", golden, lambda p: f"{kb}/{p}")
    result = invoke("eval", "--retriever", f"run:{run}", "--kb-path", str(kb), "--golden",
                    str(golden), "--no-history", "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["aggregate"]["mrr"] == 0.0
    (finding,) = [f for f in doc["findings"] if f["check"] == "retriever-paths-implausible"]
    assert finding["against"] == "index" and finding["pattern"] == "absolute"
    assert finding["implausible"] == finding["hits"] == 30
    assert len(finding["examples"]) == 3
    assert all(e.startswith(f"{kb}/") for e in finding["examples"])
    assert (
        "groove eval: 30 of 30 hit paths from the retriever are not indexed paths "
        "(retriever-paths-implausible)."
    ) in result.stderr
    assert f"Likely fix: the paths are absolute: strip '{kb}/' to get paths" in result.stderr


def test_dot_slash_hit_paths_are_reported_against_the_golden_paths(
    tmp_path: Path, golden: Path
) -> None:
    run = _run_file(tmp_path / "dot.jsonl", golden, lambda p: f"./{p}")
    result = invoke("eval", "--retriever", f"run:{run}", "--golden", str(golden),
                    "--no-history", "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (finding,) = json.loads(result.stdout)["findings"]
    assert (finding["against"], finding["pattern"]) == ("golden", "dot-slash")
    assert "do not look like the golden file's paths (retriever-paths-implausible)" in (
        result.stderr
    )
    assert "Likely fix: the paths start with ./ or ../" in result.stderr


def test_duplicate_query_ids_are_a_finding(tmp_path: Path, run_jsonl: Path) -> None:
    golden = tmp_path / "dup.yml"
    golden.write_text(
        "queries:\n"
        "  - {id: q1, query: roll back a bad release, expected: [{path: ops/rollback.md}]}\n"
        "  - {id: q1, query: canary traffic share, expected: [{path: ops/canary.md}]}\n",
        encoding="utf-8",
    )
    result = invoke("eval", "--retriever", f"run:{run_jsonl}", "--golden", str(golden),
                    "--no-history", "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert {"check": "duplicate-query-id", "query_id": "q1", "lines": [2, 3],
            "default_id": False} in findings  # fmt: skip
    assert "query id 'q1' names 2 queries (lines 2, 3)" in result.stderr
