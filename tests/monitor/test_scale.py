"""Scale, measured here (issue #13 item 6): N local SDK workers at a low rate each into
the embedded emulator, the monitor in-process writing through the emulator's SQL API.
Every fleet window's rows equal the sum of its workers' rows exactly, its percentiles
are those of the merged histograms and lie between the workers' own (exact, from their
raw latencies; the workers print no raw latencies), every landed row is in one window's
ingest-to-visible count, and nothing is lost. Slow (a minute and more, N SDK processes):
run on demand, e.g.

    ELASTIC_MONITOR_SCALE=16,2e6,60 python3 -m pytest -q -p no:cacheprovider -s \\
        tests/monitor/test_scale.py
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from pathlib import Path

import pytest
from emulator_support import sdk_available

SCALE = os.environ.get("ELASTIC_MONITOR_SCALE")
pytestmark = [
    pytest.mark.skipif(not SCALE, reason="set ELASTIC_MONITOR_SCALE=WORKERS,BPS,SECONDS"),
    pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed"),
]


def test_fleet_windows_are_exact_at_scale(tmp_path: Path) -> None:
    from elastic_channels.emulator import Emulator, EmulatorConfig
    from elastic_channels.fleet import local
    from elastic_channels.fleet.verify import verify_landed
    from elastic_channels.monitor import histogram
    from elastic_channels.monitor.monitor import Monitor
    from elastic_channels.monitor.target import profile_sink
    from elastic_channels.worker.settings import flag_args

    n, bps, seconds = (float(x) for x in str(SCALE).split(","))
    workers = int(n)
    run_id = f"scale-{int(time.time())}"
    emu = Emulator(EmulatorConfig(data_dir=tmp_path / "emu", append_buffer_ms=100)).start()
    try:
        info = tmp_path / "info.json"
        info.write_text(json.dumps(emu.info()))
        sink = profile_sink(info)  # the SQL API over HTTPS, as another process would
        sink.ensure_table()
        monitor = Monitor(run_id, sink, grace_s=10.0, expected_workers=workers)
        common = flag_args({"run_id": run_id, "target_bps": bps, "duration_seconds": seconds,
                            "window_seconds": 5.0, "profile": str(info)})  # fmt: skip
        env = dict(os.environ, SS_LOG_LEVEL="error", SS_LOG_TARGET="stderr")
        procs = local.start_workers(workers, common, env)
        lines: queue.Queue = queue.Queue()
        for p in procs:
            threading.Thread(target=lambda p=p: [lines.put(x) for x in p.proc.stdout],
                             daemon=True).start()  # fmt: skip
            threading.Thread(target=lambda p=p: [None for _ in p.proc.stderr],
                             daemon=True).start()  # fmt: skip
        records = []
        started, seen_live = time.monotonic(), None
        while any(p.proc.poll() is None for p in procs) or not lines.empty():
            try:
                raw = lines.get(timeout=0.5)
                if monitor.feed(raw):
                    records.append(json.loads(raw))
            except queue.Empty:
                pass
            monitor.tick()
            if seen_live is None and time.monotonic() - started > seconds / 2:
                seen_live = len(sink.read_rows(run_id, fleet=True))
        monitor.flush()
        assert monitor.wait_visible(300)
        monitor.flush(final=True)
        windows = [r for r in records if r["type"] == "window"]
        summaries = [r for r in records if r["type"] == "summary"]
        landed = verify_landed(emu, run_id, summaries)
        fleet = monitor.fleet_windows()
    finally:
        emu.stop()
    assert len(summaries) == workers
    assert landed["lost"] == 0
    assert seen_live, "no fleet window in the table half way through the run"
    for f in fleet:
        mine = [w for w in windows if w["window_start"] == f["window_start"]]
        assert f["workers"] == len(mine)
        assert (f["rows"], f["bytes"]) == (sum(w["rows"] for w in mine),
                                           sum(w["bytes"] for w in mine))  # fmt: skip
        merged = histogram.merge(w["ack_hist_us"] for w in mine)
        assert f["ack_p50_ms"] == histogram.percentile_ms(merged, 50)
        assert f["ack_p99_ms"] == histogram.percentile_ms(merged, 99)
        # The workers print no raw latencies, but each line's own ack_p50/p99_ms is read
        # off its raw latencies (exact, to 0.1 ms), and a percentile of a union lies
        # between the parts' percentiles: the fleet's, off the merged histograms, must
        # too (to the histogram's 3 digits).
        for key in ("ack_p50_ms", "ack_p99_ms"):
            parts = [w[key] for w in mine if w["acks"]]
            if parts:
                low, high = min(parts) * (1 - 2e-3) - 0.05, max(parts) * (1 + 2e-3) + 0.05
                assert low <= f[key] <= high, (f["window_start"], key, parts, f[key])
    assert sum(f["rows"] for f in fleet) == sum(s["rows_sent"] for s in summaries)
    assert sum(f["visible_rows"] or 0 for f in fleet) == landed["rows_landed"]
    print(json.dumps({
        "workers": workers, "fleet_windows": len(fleet), "live_fleet_rows_half_way": seen_live,
        "rows_landed": landed["rows_landed"], "lost": landed["lost"],
        "duplicates": landed["duplicates"], "visible_p50_ms": landed["visible_p50_ms"],
        "visible_p99_ms": landed["visible_p99_ms"],
    }))  # fmt: skip
