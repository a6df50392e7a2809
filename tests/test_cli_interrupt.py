"""Ctrl-C ends a groove command the way a shell script expects: by SIGINT, not with an exit
code groove gives a meaning. Exit 1 is eval's regression: ci/gate.sh, which goes on after
a child that exits normally, took an interrupted run for a regression and proposed the
previous run as the new accepted baseline."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

#: A command that is interrupted at once, run through groove's own entry point.
INTERRUPTED = """
import sys
from groove import cli as groove_cli

@groove_cli.cli.command("interrupted")
def interrupted() -> None:
    raise KeyboardInterrupt

sys.argv = ["groove", "interrupted"]
groove_cli.main()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_ends_groove_by_sigint_not_with_the_regression_code() -> None:
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (-signal.SIGINT, "", "\nAborted!\n")


def test_once_a_command_is_done_a_late_ctrl_c_is_not_a_traceback() -> None:
    """A Ctrl-C that lands after the command finished (its outputs written, the history
    saved), while Python tears down, printed "Exception ignored ... KeyboardInterrupt"
    with a traceback under a run that succeeded: the finished command ignores it."""
    from groove.cli import main

    try:
        with pytest.raises(SystemExit) as ended:
            main(["--version"])
        assert ended.value.code == 0
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
