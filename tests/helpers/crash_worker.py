"""Run ``groove`` commands in child processes that a test can SIGKILL at chosen points.

Starting a Python that imports groove costs about a second here, too much for dozens of kill
points. So ``main()`` is a small fork server: it imports groove once, then for every command
line it reads (JSON on stdin) forks one child per job in it (a click command line, or a
function under tests/), and reports the children's pids and then how each ended (JSON on
stdout). Each child is a real process; the test kills it with SIGKILL from outside
(``kill_after``), or the child kills itself deterministically after ``kill_at_step`` SQLite
progress callbacks (one callback per ``STEP`` virtual-machine instructions, on every
connection groove opens), which lands inside statements and transactions as well as between
them. Several jobs in one command run at the same time.

The embedding model is replaced by ``HashingEmbedder`` (load_embedder patched in
groove.engine.session, test-only), so a build of a few hundred notes takes a fraction of a second.

Run as ``python crash_worker.py``; use from tests through ``Worker``.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STEP = 50  # SQLite VM instructions between progress callbacks


@dataclass(frozen=True)
class Outcome:
    """How one child ended: ``signal`` is 9 when it was killed, else ``exit`` is its code."""

    pid: int
    exit: int | None
    signal: int | None
    steps: int | None  # progress callbacks counted by a child that ran to the end
    stdout: str
    stderr: str

    @property
    def killed(self) -> bool:
        return self.signal == signal.SIGKILL


class Worker:
    """The test side: one fork server per test module."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.count = 0
        self.proc = subprocess.Popen(
            [sys.executable, __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        assert self._read() == {"ready": True}

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("crash worker exited")
        result: dict[str, Any] = json.loads(line)
        return result

    def run(
        self,
        args: list[str],
        *,
        kill_at_step: int | None = None,
        kill_after: float | None = None,
    ) -> Outcome:
        """Run ``groove <args>`` in a fresh child; kill it at a step or after a delay."""
        job = {"cli": args, "kill_at_step": kill_at_step}
        return self.run_jobs([job], kill_after=None if kill_after is None else [kill_after])[0]

    def call(self, function: str, kill_after: float | None = None, **kwargs: Any) -> Outcome:
        """Run ``function(**kwargs)`` ("module:name" under tests/) in a fresh child."""
        job = {"call": function, "kwargs": kwargs}
        return self.run_jobs([job], kill_after=None if kill_after is None else [kill_after])[0]

    def run_jobs(
        self, jobs: list[dict[str, Any]], kill_after: list[float | None] | None = None
    ) -> list[Outcome]:
        """Start one child per job at once; ``kill_after[i]`` kills child i after a delay."""
        assert self.proc.stdin is not None
        outs = [str(self.scratch / f"child-{self.count + i + 1}") for i in range(len(jobs))]
        self.count += len(jobs)
        command = {"jobs": [{**job, "out": out} for job, out in zip(jobs, outs, strict=True)]}
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        pids = self._read()["pids"]
        _kill_later(pids, kill_after or [])
        self.proc.stdin.write("reap\n")  # every kill is sent: the server may reap now
        self.proc.stdin.flush()
        ended = self._read()["ended"]
        return [
            Outcome(
                pid=end["pid"],
                exit=end["exit"],
                signal=end["signal"],
                steps=end["steps"],
                stdout=Path(f"{out}.stdout").read_text(encoding="utf-8"),
                stderr=Path(f"{out}.stderr").read_text(encoding="utf-8"),
            )
            for end, out in zip(ended, outs, strict=True)
        ]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _kill_later(pids: list[int], delays: list[float | None]) -> None:
    """SIGKILL each pid after its delay (in order of delay).

    The server does not reap a child before the client says "reap", so a pid still names our
    child (at worst a zombie, which ignores the signal) and is never reused by another process.
    """
    started = time.perf_counter()
    for delay, pid in sorted((d, p) for p, d in zip(pids, delays, strict=False) if d is not None):
        time.sleep(max(0.0, delay - (time.perf_counter() - started)))
        os.kill(pid, signal.SIGKILL)


# ---- the fork server ---------------------------------------------------------------------


def _install_hooks(kill_at_step: int | None, counter: list[int]) -> None:
    """Count progress callbacks on every connection; SIGKILL this process at the chosen one."""
    import groove.store.db as db

    real_open = db.open_connection

    def progress() -> int:
        counter[0] += 1
        if counter[0] == kill_at_step:
            os.kill(os.getpid(), signal.SIGKILL)
        return 0

    def open_connection(path: str) -> Any:
        conn = real_open(path)
        conn.set_progress_handler(progress, STEP)
        return conn

    db.open_connection = open_connection  # type: ignore[assignment]


def _redirect_output(out: str) -> None:
    """stdin from /dev/null (the server's commands are not the child's), stdout/err to files."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    for fd, suffix in ((1, ".stdout"), (2, ".stderr")):
        handle = os.open(out + suffix, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(handle, fd)
        os.close(handle)


def _run_job(job: dict[str, Any]) -> int:
    if "call" in job:
        module, name = job["call"].split(":")
        getattr(importlib.import_module(module), name)(**job["kwargs"])
        return 0
    from groove.cli import cli

    try:
        cli.main(args=job["cli"], prog_name="groove", standalone_mode=True)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


def _child(job: dict[str, Any]) -> int:
    _redirect_output(job["out"])
    counter = [0]
    _install_hooks(job.get("kill_at_step"), counter)
    try:
        code = _run_job(job)
    except BaseException:
        traceback.print_exc()
        code = 70
    sys.stdout.flush()
    sys.stderr.flush()
    Path(job["out"] + ".steps").write_text(str(counter[0]), encoding="utf-8")
    return code


def _fork(job: dict[str, Any]) -> int:
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            code = _child(job)
        finally:
            os._exit(code)
    return pid


def _ended(pid: int, out: str) -> dict[str, Any]:
    _, status = os.waitpid(pid, 0)
    steps_file = Path(out + ".steps")
    return {
        "pid": pid,
        "exit": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "steps": int(steps_file.read_text(encoding="utf-8")) if steps_file.exists() else None,
    }


def _serve(command: dict[str, Any]) -> None:
    jobs = command["jobs"]
    pids = [_fork(job) for job in jobs]
    print(json.dumps({"pids": pids}), flush=True)
    for pid in pids:  # wait for every child to end, leaving it unreaped
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    if sys.stdin.readline().strip() != "reap":
        raise RuntimeError("the client did not say reap")
    ended = [_ended(pid, job["out"]) for pid, job in zip(pids, jobs, strict=True)]
    print(json.dumps({"ended": ended}), flush=True)


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for "helpers.x"
    import groove.cli
    import groove.engine.session
    from helpers.hashing import HashingEmbedder

    def hashing(*args: object, **kwargs: object) -> HashingEmbedder:
        return HashingEmbedder()

    groove.engine.session.load_embedder = hashing  # type: ignore[assignment]
    assert groove.cli.cli is not None  # imported once, before any fork
    print(json.dumps({"ready": True}), flush=True)
    while line := sys.stdin.readline():
        if line.strip():
            _serve(json.loads(line))


if __name__ == "__main__":
    main()
