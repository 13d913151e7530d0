"""The Run page's "Where the ack time goes": the decomposition of a window's mean ack
latency into the SDK's means on hand-made rows, the query on both dialects (DuckDB's
JSON paths on the file, Snowflake's VARIANT paths through the emulator's translation),
and the page on metrics tables with and without SDK figures."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from dashboard_support import APP_DIR, write_metrics
from streamlit.testing.v1 import AppTest

from elastic_channels.dashboard import ack_time as a
from elastic_channels.dashboard.ack_time_view import NO_SDK, NO_SDK_WINDOWS, TITLE
from elastic_channels.dashboard.dialect import DUCKDB, SNOWFLAKE
from elastic_channels.dashboard.metrics_columns import MetricsColumns
from elastic_channels.monitor import histogram
from elastic_channels.monitor.rows import fleet_row, worker_row
from elastic_channels.snowflake.ddl import METRICS_COLUMNS

RUN = "run-ack-time"
#: The table's columns as the setup DDL has them.
ALL = MetricsColumns.resolve(n for n, _ in METRICS_COLUMNS)


def _summary(n: int, mean: float) -> dict[str, Any]:
    return {"n": n, "mean": mean, "p50": mean, "p99": 2 * mean, "max": 3 * mean}


def _sdk(
    *, upload: float | None = 40.0, inline: bool = False, throttle: dict[str, int] | None = None
) -> dict[str, Any]:
    """A window's ``sdk`` object as sdk/metrics_window.window_figures makes it."""
    api = (
        {"insert_rows": {"calls": 4, "retryable": 0, "non_retryable": 0, "auth": 0,
                         "ms": _summary(4, 30.0)}}
        if inline
        else {"insert_files": {"calls": 2, "retryable": 0, "non_retryable": 0, "auth": 0,
                               "ms": _summary(2, 25.0)}}
    )  # fmt: skip
    return {
        "files": {"durable": 0 if inline else 2, "transient": 0, "errors": 0,
                  "compressed_bytes": 1000, "uncompressed_bytes": 5000, "rows": 10},
        "inline": {"requests": 4 if inline else 0, "compressed_bytes": 0,
                   "uncompressed_bytes": 0, "rows": 0},
        "api": api,
        "throttle": {"memory_limit": 0, "inflight_byte_limit": 0, "inflight_row_limit": 0,
                     "input_buffer_full": 0, "output_buffer_full": 0, **(throttle or {})},
        "ms": {
            "input_buffer": _summary(10, 900.0), "output_buffer": _summary(10, 15.0),
            "processing_rows": _summary(4, 960.0) if inline else None,
            "processing_files": None if inline else _summary(2, 980.0),
            "file_upload": None if inline or upload is None else _summary(2, upload),
        },
        "compression_ratio": _summary(2, 5.0),
        "in_flight": {"bytes": 0, "rows": 0},
    }  # fmt: skip


def _hist(*ms: float) -> str:
    h = histogram.new_histogram()
    for v in ms:
        histogram.record_seconds(h, v / 1e3)
    return histogram.encode(h)


def sdk_rows(t0: float) -> list[dict[str, Any]]:
    """Four 1 s fleet windows (and one worker's rows) as the monitor writes them: files
    (acks 1100 and 1300 ms: mean 1200), files throttled by the in-flight byte limit,
    inline, one whose ack mean is below the SDK's parts; and a sliver after the end of
    sending (partial, 0.2 s), which the query leaves out."""
    windows = [
        (_sdk(), _hist(1100, 1300)),
        (_sdk(throttle={"inflight_byte_limit": 20, "memory_limit": 1}), _hist(1500)),
        (_sdk(inline=True), _hist(1000)),
        (_sdk(), _hist(500)),
        (_sdk(), _hist(100)),
    ]
    rows = []
    for i, (sdk, hist) in enumerate(windows):
        span = {"window_start": t0 + i, "window_seconds": 1.0, "start": t0 + i,
                "end": t0 + i + 1, "rows": 100, "bytes": 30_000, "acks": 2,
                "mb_per_s": 0.03, "ack_hist_us": hist, "sdk": sdk}  # fmt: skip
        if i == len(windows) - 1:  # the sliver after sending: 0.2 s of a 1 s window
            span.update(end=t0 + i + 0.2, partial=True)
        rows.append(worker_row({**span, "run_id": RUN, "worker_id": 0, "mb_per_s": 0.03}))
        throttled = {k: v for k, v in sdk["throttle"].items() if v}
        rows.append(fleet_row(RUN, {**span, "workers": 1, **({"sdk_throttled": throttled}
                                                            if throttled else {})}))  # fmt: skip
    return rows


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """What the query returns, from the rows in Python (the test's own reading of SDK)."""
    import json

    out = []
    for r in rows:
        if not r["IS_FLEET"]:
            continue
        sdk = json.loads(r["SDK"])
        got: dict[str, Any] = {"T0": r["WINDOW_START"], "T": r["WINDOW_END"]}
        for col, path in {**a.SDK_PATHS, **a.THROTTLE}.items():
            v: Any = sdk
            for k in path:
                v = v.get(k) if isinstance(v, dict) else None
            got[col] = v
        got["SDK_THROTTLED"] = r["SDK_THROTTLED"]
        got["ACK_HIST"] = r["ACK_LATENCY_HIST"]
        out.append(got)
    return pd.DataFrame(out)


def test_decompose_hand_made_rows() -> None:
    parts = a.decompose(_frame(sdk_rows(1_700_000_000.0))[:4])
    # files: buffer 900 + 15, upload 40, insert_files 25; ack mean 1200: the rest 220
    assert list(parts["buffer"]) == pytest.approx([915.0] * 4)
    assert list(parts["upload"]) == pytest.approx([40.0, 40.0, 0.0, 40.0])
    assert list(parts["registration/API"]) == pytest.approx([25.0, 25.0, 30.0, 25.0])
    assert parts[a.ACK_MEAN].tolist() == pytest.approx([1200.0, 1500.0, 1000.0, 500.0], rel=1e-3)
    rest = parts["the rest"].tolist()
    assert rest[:3] == pytest.approx([220.0, 520.0, 55.0], abs=1.5)
    assert rest[3] == 0.0  # 500 - 980 floored at 0
    # the parts add up to the ack mean wherever it is not floored
    total = parts[list(a.PARTS)].sum(axis=1)
    assert total[:3].tolist() == pytest.approx(parts[a.ACK_MEAN][:3].tolist())
    assert parts["SDK processing, files"].tolist()[:2] == [980.0, 980.0]
    assert math.isnan(parts["SDK processing, files"][2])
    assert parts["SDK processing, inline"][2] == 960.0
    assert parts["throttled"].tolist() == [False, True, False, False]
    assert parts["throttle"][1] == "memory limit x1, in-flight byte limit x20"


def test_decompose_weights_both_apis_and_missing_ack() -> None:
    df = pd.DataFrame([{
        "T0": 0, "T": 1, "INPUT_BUFFER_MS": None, "OUTPUT_BUFFER_MS": 10.0,
        "INSERT_FILES_MS": 20.0, "INSERT_FILES_N": 3, "INSERT_ROWS_MS": 60.0,
        "INSERT_ROWS_N": 1, "ACK_HIST": None, "SDK_THROTTLED": 0,
    }])  # fmt: skip
    parts = a.decompose(df)
    assert parts["buffer"][0] == 10.0  # a part without a value counts 0
    assert parts["registration/API"][0] == pytest.approx(30.0)  # (3*20 + 60) / 4 calls
    assert math.isnan(parts[a.ACK_MEAN][0]) and math.isnan(parts["the rest"][0])
    assert not parts["throttled"][0]


@pytest.mark.parametrize("dialect", [DUCKDB, SNOWFLAKE], ids=["duckdb", "snowflake"])
def test_query_reads_the_paths(tmp_path: Path, dialect: Any) -> None:
    """The query's figures are the SDK object's, on DuckDB as written and on Snowflake's
    VARIANT paths as the emulator's SQL API translates them."""
    import duckdb

    from elastic_channels.emulator.sql.translate import translate

    rows = sdk_rows(1_700_000_000.0)
    write_metrics(tmp_path, RUN, rows)
    stmt = a.query(dialect, RUN, ALL)
    assert stmt is not None
    text = stmt.sql if dialect is DUCKDB else translate(stmt.sql)[0]
    con = duckdb.connect(str(tmp_path / "emulator.duckdb"), read_only=True)
    try:
        got = con.execute(text, list(stmt.params)).df()
    finally:
        con.close()
    want = _frame(rows)[:4]  # not the sliver
    assert len(got) == 4
    for col in [*a.SDK_PATHS, *a.THROTTLE, "SDK_THROTTLED"]:
        assert pd.to_numeric(got[col]).tolist() == pytest.approx(
            pd.to_numeric(want[col]).tolist(), nan_ok=True
        ), col
    assert got["ACK_HIST"].tolist() == want["ACK_HIST"].tolist()


def test_no_sdk_column() -> None:
    old = MetricsColumns.resolve(n for n, _ in METRICS_COLUMNS if not n.startswith("SDK"))
    assert a.query(DUCKDB, RUN, old) is None


def _render(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> AppTest:
    monkeypatch.setenv("ELASTIC_DASHBOARD_DATA_DIR", str(data_dir))
    at = AppTest.from_file(str(APP_DIR / "pages" / "run.py"), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_page_draws_the_chart(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_metrics(tmp_path, RUN, sdk_rows(time.time() - 10))
    at = _render(monkeypatch, tmp_path)
    assert TITLE in [s.value for s in at.subheader]
    assert any(
        "1 window(s) the SDK throttled in (memory limit x1, in-flight byte limit x20)" in c.value
        for c in at.caption
    )
    table = next(d.value for d in at.dataframe if "the rest" in d.value.columns)
    assert table["the rest"].tolist()[:3] == pytest.approx([220.0, 520.0, 55.0], abs=1.5)
    assert table["SDK throttled"].tolist()[1] == "memory limit x1, in-flight byte limit x20"


def test_page_without_sdk_figures(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rows = [{**r, "SDK": None, "SDK_THROTTLED": None} for r in sdk_rows(time.time() - 10)]
    write_metrics(tmp_path, RUN, rows)
    at = _render(monkeypatch, tmp_path)
    assert not at.error
    assert TITLE in [s.value for s in at.subheader]
    assert NO_SDK_WINDOWS in [c.value for c in at.caption]
    assert not any("the rest" in d.value.columns for d in at.dataframe)


def test_page_table_without_sdk_column(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A metrics table from before the monitor wrote SDK: a note, the rest of the page."""
    import duckdb

    write_metrics(tmp_path, RUN, sdk_rows(time.time() - 10))
    con = duckdb.connect(str(tmp_path / "emulator.duckdb"))
    try:
        for col in ("SDK", "SDK_THROTTLED"):
            con.execute(f"ALTER TABLE ELASTIC_K8S_METRICS DROP COLUMN {col}")
        con.execute("CHECKPOINT")
    finally:
        con.close()
    at = _render(monkeypatch, tmp_path)
    assert not at.error
    assert NO_SDK in [c.value for c in at.caption]
    assert any(s.value == "Batch ack latency (ms)" for s in at.subheader)


def test_chart_layers() -> None:
    """The throttled windows red behind the stack, the processing means as rules; a
    valid Vega-Lite spec (Altair validates it)."""
    from elastic_channels.dashboard.ack_time_view import chart

    df = _frame(sdk_rows(1_700_000_000.0))[:4]
    for c in ("T0", "T"):
        df[c] = pd.to_datetime(df[c], utc=True)
    spec = chart(a.decompose(df)).to_dict()
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rect", "bar", "rule"]
    assert len(spec["datasets"]) == 3
    throttled = next(d for d in spec["datasets"].values() if "throttle" in d[0])
    assert [r["throttle"] for r in throttled] == ["memory limit x1, in-flight byte limit x20"]
    # four windows, four parts each but the rest of none
    bars = next(d for d in spec["datasets"].values() if "part" in d[0])
    assert len(bars) == 16
