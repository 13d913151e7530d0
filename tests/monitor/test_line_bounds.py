"""Lines are read under a length cap, at a cost linear in the bytes: a line without a
newline, however long, is cut at the cap (the cut part is a bad line), the rest of it
is passed over, and reading picks up at the next newline: from a pod's log stream and
from a file alike."""

from __future__ import annotations

import json
import os
import queue
import time
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

from hostile_support import RUN, victim_line
from monitor_support import duckdb_with_landing_table, make_sink

from elastic_channels.monitor.k8s import PodLogSource
from elastic_channels.monitor.monitor import Monitor
from elastic_channels.monitor.sources import END, read_streams

LONG = 16 << 20  # bytes without a newline
CHUNK = b"x" * 65536


class LongLineLog:
    """A pod's log: a 16 MB line without a newline, in 64 kB chunks, then good lines."""

    def __init__(self, tail: bytes) -> None:
        self.tail = tail

    def stream(self, _n: int):
        for _ in range(LONG // len(CHUNK)):
            yield CHUNK
        yield b"\n" + self.tail

    def release_conn(self) -> None:
        pass


def test_the_log_follower_cuts_a_long_line_and_reads_on(caplog) -> None:
    good = json.dumps(victim_line()).encode()
    core = SimpleNamespace(read_namespaced_pod_log=lambda *a, **k: LongLineLog(good + b"\n"))
    source = PodLogSource(core, "ns", "sel", queue.Queue())
    tracemalloc.start()
    cpu = time.thread_time()
    try:
        lines = list(source._stream_lines("pod-0"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    spent = time.thread_time() - cpu
    assert peak < 4 << 20, f"following a {LONG}-byte line held {peak} bytes"
    assert spent < 1.0, f"following a {LONG}-byte line took {spent:.2f} CPU-s"
    assert lines[-1] == good and len(lines) == 2
    assert source.cut_lines == 1
    monitor = Monitor(RUN, make_sink(duckdb_with_landing_table()), grace_s=0.0, visible=False)
    assert not monitor.feed(lines[0], pod_name="pod-0")
    assert monitor.feed(lines[1], pod_name="pod-0")
    assert monitor.tally.bad_lines == {None: 1}


def test_a_file_with_a_long_line_is_read_under_the_cap(tmp_path: Path) -> None:
    good = json.dumps(victim_line())
    path = tmp_path / "worker.log"
    with path.open("wb") as f:
        for _ in range(LONG // len(CHUNK)):
            f.write(CHUNK)
        f.write(b"\n" + good.encode() + b"\nlast line without a newline")
    lines: queue.Queue = queue.Queue()
    tracemalloc.start()
    try:
        for t in read_streams([str(path)], lines):
            t.join(30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    items = []
    while (item := lines.get_nowait()) is not END:
        items.append(item[0])
    assert peak < 4 << 20, f"reading a {LONG}-byte line held {peak} bytes"
    assert len(items) == 3
    assert len(items[0]) < LONG
    assert items[1].strip() in (good, good.encode())
    assert items[2].strip() in ("last line without a newline", b"last line without a newline")


def test_a_line_on_stdin_is_handed_on_as_it_comes() -> None:
    """Reading in chunks does not wait for a chunk to fill: a line piped in (``kubectl
    logs -f | elastic-channels monitor -``) reaches the queue while the pipe is open."""
    r, w = os.pipe()
    lines: queue.Queue = queue.Queue()
    with os.fdopen(r, "r") as stdin:  # a text stream over a byte buffer, as sys.stdin
        try:
            read_streams(["-"], lines, stdin=stdin)
            os.write(w, b'{"first": 1}\n')
            assert lines.get(timeout=10)[0] == b'{"first": 1}'
        finally:
            os.close(w)
        assert lines.get(timeout=10) is END
