"""A worker that did not exit on its own is reported with the signal that ended it
(issue #22 item 6: a SIGKILLed worker read "exited -9")."""

from __future__ import annotations

import signal
import subprocess
import sys

from elastic_channels.fleet.local import WorkerProc, describe_exit


def test_a_killed_worker_is_named_by_its_signal():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert WorkerProc(0, proc).exit_text() == "killed by SIGKILL"


def test_exit_codes_in_words():
    assert describe_exit(0) == "exited 0"
    assert describe_exit(2) == "exited 2"
    assert describe_exit(-signal.SIGTERM) == "killed by SIGTERM"
    assert describe_exit(None) == "still running"
