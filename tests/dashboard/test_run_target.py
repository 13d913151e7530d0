"""The Run page over a run with a load shape: the target line is each window's target
from the table (the fleet's: its workers' added up), warmup windows are shaded and
marked, and the run's rates leave warmup out."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import LandedRun, write_metrics
from streamlit.testing.v1 import AppTest

PAGE = "pages/run.py"


def shaped_rows(run_id: str, t0: float) -> list[dict[str, Any]]:
    """Two workers, 1 s windows from ``t0``: 2 warmup windows at 1 MB/s each, then a
    stage at 2 MB/s and one at 3 MB/s (two windows each); each worker sends its target."""
    from elastic_channels.monitor.rows import fleet_row, worker_row

    shape = [(-1, True, 1e6)] * 2 + [(0, False, 2e6)] * 2 + [(1, False, 3e6)] * 2
    rows: list[dict[str, Any]] = []
    for i, (stage, warmup, bps) in enumerate(shape):
        lines = [
            {
                "type": "window", "run_id": run_id, "worker_id": w, "window_start": t0 + i,
                "window_seconds": 1.0, "start": t0 + i, "end": t0 + i + 1,
                "rows": int(bps / 300), "bytes": int(bps), "acked_rows": int(bps / 300),
                "acked_bytes": int(bps), "acks": 4, "mb_per_s": bps / 1e6,
                "rows_per_s": bps / 300, "ack_p50_ms": 40.0, "ack_p99_ms": 90.0,
                "target_bps": bps, "stage": stage, "warmup": warmup, "scenario": "steps",
            }
            for w in (0, 1)
        ]  # fmt: skip
        rows += [worker_row(x) for x in lines]
        fleet = {
            "window_start": t0 + i, "window_seconds": 1.0, "start": t0 + i, "end": t0 + i + 1,
            "workers": 2, "rows": sum(x["rows"] for x in lines),
            "bytes": sum(x["bytes"] for x in lines), "mb_per_s": 2 * bps / 1e6,
            "rows_per_s": 2 * bps / 300, "ack_p50_ms": 40.0, "ack_p99_ms": 90.0,
            "target_bps": 2 * bps, "stage": stage, "warmup": warmup,
        }  # fmt: skip
        rows.append(fleet_row(run_id, fleet))
    return rows


def shades(spec: dict[str, Any]) -> bool:
    """Whether a chart's spec holds the shaded warmup layer (an orange rect)."""
    return any(
        layer.get("mark", {}).get("type") == "rect" and layer["mark"].get("color") == "orange"
        for layer in spec.get("layer", [])
    )


def render(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> AppTest:
    from dashboard_support import APP_DIR

    monkeypatch.setenv("ELASTIC_DASHBOARD_DATA_DIR", str(data_dir))
    at = AppTest.from_file(str(APP_DIR / PAGE), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_target_is_each_windows_and_warmup_is_shaded(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    t0 = time.time() - 7
    write_metrics(landed_copy.data_dir, landed_copy.run_id, shaped_rows(landed_copy.run_id, t0))
    at = render(monkeypatch, landed_copy.data_dir)
    assert not at.error
    series = next(d.value for d in at.dataframe if "workers reporting" in d.value.columns)
    # the fleet's target per window, from its rows: not one figure times the workers
    assert list(series["target MB/s"]) == pytest.approx([2.0, 2.0, 4.0, 4.0, 6.0, 6.0])
    assert list(series["MB/s"]) == pytest.approx([2.0, 2.0, 4.0, 4.0, 6.0, 6.0])
    assert list(series["warmup"]) == [1, 1, 0, 0, 0, 0]
    assert not [n for n in at.number_input if n.label.startswith("Target MB/s")]
    assert any("Shaded: warmup windows" in c.value for c in at.caption)
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert len(specs) >= 4 and all(shades(s) for s in specs)  # every chart marks warmup
    # the running workers' rate leaves warmup out: 4 windows after it, 2.5 MB/s each
    workers = next(d.value for d in at.dataframe if "STATE" in d.value.columns)
    assert list(workers["MB/s"]) == pytest.approx([2.5, 2.5])


def test_rows_without_a_target_per_window_fall_back_to_the_typed_one(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    rows = shaped_rows(landed_copy.run_id, time.time() - 7)
    for r in rows:
        r.update(TARGET_BPS=None if r["IS_FLEET"] else 5e6, WARMUP=None)
    write_metrics(landed_copy.data_dir, landed_copy.run_id, rows)
    at = render(monkeypatch, landed_copy.data_dir)
    series = next(d.value for d in at.dataframe if "workers reporting" in d.value.columns)
    assert list(series["target MB/s"]) == pytest.approx([10.0] * 6)  # 5 MB/s x 2 workers
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert specs and not any(shades(s) for s in specs)
