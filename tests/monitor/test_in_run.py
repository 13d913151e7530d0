"""RunMonitor, as ``elastic-channels run`` uses it, on a real emulator in this process."""

from __future__ import annotations

import json
import random
from pathlib import Path

from emulator_support import make_emulator
from monitor_support import EPOCH0, FakeWorker

from elastic_channels.monitor.in_run import RunMonitor


def test_lines_in_fleet_windows_out_of_the_emulators_table(tmp_path: Path) -> None:
    rng = random.Random(2)
    workers = [FakeWorker("in-run", w, EPOCH0 + 0.1 * w, 5.0) for w in range(3)]
    for w in workers:
        while w.now < w.start + 11:
            w.step(0.3, rng)
        w.finish()
    heard = []
    emu = make_emulator(tmp_path)
    try:
        mon = RunMonitor("in-run", 3, emulator=emu, tick_s=0.0, on_fleet=heard.append)
        for w in workers:
            for line in w.lines:
                mon.feed(json.dumps(line))
            mon.feed(dict(w.summary(), rows_acked=0))  # nothing landed in this test
        fleet = mon.finish(visible_wait_s=1)
        rows = emu.query(
            "SELECT count(*) FROM ELASTIC_K8S_METRICS WHERE RUN_ID = 'in-run' AND IS_FLEET"
        )
    finally:
        emu.stop()
    starts = sorted({x["window_start"] for w in workers for x in w.lines})
    assert [f["window_start"] for f in fleet] == starts
    assert rows[0][0] == len(starts)
    for f in fleet:
        mine = [x for w in workers for x in w.lines if x["window_start"] == f["window_start"]]
        assert (f["workers"], f["rows"]) == (len(mine), sum(x["rows"] for x in mine))
    assert sorted({f["window_start"] for f in heard}) == starts
