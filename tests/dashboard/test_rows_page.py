"""The "Latest rows" page, run headless by AppTest on a workload's landing table in an
emulator data dir (the rows its msgspec generator makes, written as the emulator types
them: VARIANT as JSON); what it shows is checked against the rows written and SQL."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from dashboard_support import APP_DIR, sql
from streamlit.testing.v1 import AppTest
from workload_rows import Batch, write_rows

from elastic_channels.dashboard.common import LATEST
from elastic_channels.dashboard.landing import load_view
from elastic_channels.dashboard.rows_page import ROWS_DEFAULT, synthetic
from elastic_channels.dashboard.rows_table import COMMITTED, DELAY
from elastic_channels.workload import load_text, load_workload

PAGE = str(APP_DIR / "pages" / "rows.py")
T0 = dt.datetime(2026, 12, 2, 10, 0, tzinfo=dt.timezone.utc)
ODD_WORKLOAD = """\
name: odd names
description: Column names that are any text, as a workload file may have them.
table: 'Odd "Table" ü'
columns:
  - {name: 'id "quoted"', type: VARCHAR, unique_id: {}}
  - {name: 'send time ⏱', type: TIMESTAMP_TZ, send_time: {}}
  - {name: 'what?', type: VARCHAR(8), choice: {values: ["a?", "b'c", 'd\\e']}}
  - {name: 'json, with commas', type: VARIANT, object: {k: {choice: {values: [1, 2]}}}}
  - {name: run-id, type: VARCHAR, run_id: {}}
"""


def render(monkeypatch: pytest.MonkeyPatch, data_dir: Path, workload: str) -> AppTest:
    monkeypatch.setenv("ELASTIC_DASHBOARD_DATA_DIR", str(data_dir))
    monkeypatch.setenv("ELASTIC_DASHBOARD_WORKLOAD", workload)
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def metric(at: AppTest, label: str) -> str:
    return str(next(m.value for m in at.metric if m.label == label))


def shown(at: AppTest) -> pd.DataFrame:
    (table,) = at.dataframe
    return table.value


@pytest.fixture(scope="module")
def clicks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """Clickstream rows (two VARIANT columns): run r1 at T0, then run r2 a minute later
    in two batches of worker 0 and one of worker 1."""
    data_dir = tmp_path_factory.mktemp("clicks") / "emu"
    minute = T0 + dt.timedelta(minutes=1)
    rows = write_rows(data_dir, load_workload("clickstream"), [
        Batch("r1", 0, 20, T0), Batch("r1", 1, 20, T0),
        Batch("r2", 0, 30, minute), Batch("r2", 1, 5, minute, delay_ms=1500),
        Batch("r2", 0, 25, minute + dt.timedelta(seconds=1)),
    ])  # fmt: skip
    return data_dir, rows


def test_latest_rows_of_the_latest_run(
    monkeypatch: pytest.MonkeyPatch, clicks: tuple[Path, list[dict[str, Any]]]
) -> None:
    data_dir, rows = clicks
    at = render(monkeypatch, data_dir, "clickstream")
    view = load_view("clickstream")
    assert [i.value for i in at.info] == [synthetic(view)]
    assert "synthetic data" in synthetic(view).lower() and "clickstream" in synthetic(view)
    assert at.title[0].value == "Latest rows"
    picker = at.selectbox(key="rows_run")
    assert picker.value == LATEST and picker.format_func(LATEST) == "latest: r2"
    assert picker.options == ["latest: r2", "r2", "r1"]  # latest commit first
    r2 = [r for r in rows if r["RUN_ID"] == "r2"]
    assert metric(at, "Rows in the run") == f"{len(r2):,}" == "60"
    df = shown(at)
    names = [c.name for c in load_workload("clickstream").columns]
    assert list(df.columns) == [*names, COMMITTED, DELAY]
    assert len(df) == ROWS_DEFAULT
    # newest send time first: the last batch's 25 rows, then 25 of the minute's 35
    by_id = {r["EVENT_ID"]: r for r in r2}
    last_batch = {r["EVENT_ID"] for r in r2 if r["EVENT_TIME"].endswith("10:01:01Z")}
    assert set(df["EVENT_ID"].head(25)) == last_batch and len(last_batch) == 25
    assert set(df["EVENT_ID"]) <= set(by_id)
    assert list(df["EVENT_TIME"].head(26)) == ["2026-12-02 10:01:01.000"] * 25 + [
        "2026-12-02 10:01:00.000"
    ]
    for _, got in df.iterrows():
        want = by_id[got["EVENT_ID"]]
        for column in ("CONTEXT", "PROPERTIES"):  # compact JSON text of the stored value
            compact = json.dumps(want[column], separators=(",", ":"), ensure_ascii=False)
            assert got[column] == compact and json.loads(got[column]) == want[column]
        commit = want["_COMMIT_TIME"]
        assert got[COMMITTED] == f"{commit:%Y-%m-%d %H:%M:%S.%f}"[:-3]
        sent = dt.datetime.fromisoformat(want["EVENT_TIME"].replace("Z", "+00:00"))
        assert got[DELAY] == (commit - sent) / dt.timedelta(milliseconds=1)
        assert float(got["REVENUE"]) == float(want["REVENUE"])
        assert (got["WORKER_ID"], got["USER_ID"]) == (want["WORKER_ID"], want["USER_ID"])
    (p50, p99) = sql(
        data_dir,
        "SELECT approx_quantile(d, 0.5), approx_quantile(d, 0.99) FROM (SELECT "
        "date_diff('millisecond', EVENT_TIME, _COMMIT_TIME) AS d FROM CLICKSTREAM_EVENTS "
        "WHERE RUN_ID = 'r2' AND _COMMIT_TIME >= (SELECT max(_COMMIT_TIME) FROM "
        "CLICKSTREAM_EVENTS WHERE RUN_ID = 'r2') - INTERVAL 10 SECOND)",
    )[0]
    assert metric(at, "Ingest-to-visible p50") == f"{p50:,.0f} ms"
    assert metric(at, "Ingest-to-visible p99") == f"{p99:,.0f} ms"
    assert metric(at, "Last commit (UTC)") == f"{max(r['_COMMIT_TIME'] for r in r2):%H:%M:%S}"


def test_an_older_run_picked_and_fewer_rows_asked(
    monkeypatch: pytest.MonkeyPatch, clicks: tuple[Path, list[dict[str, Any]]]
) -> None:
    data_dir, rows = clicks
    at = render(monkeypatch, data_dir, "clickstream")
    at.selectbox(key="rows_run").set_value("r1")
    at.number_input(key="rows_shown").set_value(7)
    at.run()
    assert not at.exception and not at.error
    assert metric(at, "Rows in the run") == "40"
    df = shown(at)
    assert len(df) == 7 and set(df["RUN_ID"]) == {"r1"}
    assert set(df["EVENT_ID"]) <= {r["EVENT_ID"] for r in rows if r["RUN_ID"] == "r1"}


def test_any_names_are_quoted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A table and columns named with quotes, spaces, ``?``, commas and non-ASCII text:
    each stays one name in the SQL, and the page shows them as they are."""
    spec = tmp_path / "odd.yaml"
    spec.write_text(ODD_WORKLOAD, encoding="utf-8")
    w = load_text(ODD_WORKLOAD, str(spec))
    rows = write_rows(tmp_path / "emu", w, [Batch("run'1", 0, 12, T0), Batch("x", 0, 3, T0)])
    at = render(monkeypatch, tmp_path / "emu", str(spec))
    assert set(at.selectbox(key="rows_run").options[1:]) == {"x", "run'1"}
    at.selectbox(key="rows_run").set_value("run'1").run()
    assert not at.exception and not at.error
    assert metric(at, "Rows in the run") == "12"
    df = shown(at)
    assert list(df.columns) == [c.name for c in w.columns] + [COMMITTED, DELAY]
    want = {r['id "quoted"']: r for r in rows}
    assert len(df) == 12
    for _, got in df.iterrows():
        row = want[got['id "quoted"']]
        assert got["what?"] == row["what?"]
        assert json.loads(got["json, with commas"]) == row["json, with commas"]
        assert got["run-id"] == "run'1"


def test_a_table_without_a_run_id_column_is_counted_whole(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    text = ODD_WORKLOAD.replace("  - {name: run-id, type: VARCHAR, run_id: {}}\n", "")
    w = load_text(text, "no-run.yaml")
    spec = tmp_path / "no-run.yaml"
    spec.write_text(text, encoding="utf-8")
    write_rows(tmp_path / "emu", w, [Batch("a", 0, 4, T0), Batch("b", 1, 6, T0)])
    at = render(monkeypatch, tmp_path / "emu", str(spec))
    assert metric(at, "Rows") == "10"
    assert any("no run-id column" in c.value for c in at.caption)
    assert len(shown(at)) == 10


def test_no_table_yet_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    at = render(monkeypatch, tmp_path / "nothing", "iot-telemetry")
    (info,) = [i.value for i in at.info if "No rows yet" in i.value]
    assert "elastic-channels run --workload iot-telemetry" in info


def test_odd_names_hold_when_values_are_written_in(tmp_path: Path) -> None:
    """The control query API (a running emulator) takes SQL text only: the values are
    written in by DuckDB's rules, and a ``?`` or quote inside a quoted name is no
    placeholder. Each statement gives what it gives with its values bound."""
    import duckdb

    from elastic_channels.dashboard import rows_sql
    from elastic_channels.dashboard.dialect import DUCKDB
    from elastic_channels.dashboard.landing import view_of
    from elastic_channels.dashboard.statement import duckdb_text

    w = load_text(ODD_WORKLOAD, "odd.yaml")
    write_rows(tmp_path / "emu", w, [Batch("run'1", 0, 12, T0), Batch("x?", 0, 3, T0)])
    v = view_of(w)
    last = (T0 + dt.timedelta(seconds=5)).isoformat()
    scope = rows_sql.Scope("run'1")
    stmts = [
        rows_sql.latest_rows(DUCKDB, v, scope, last, 20),
        rows_sql.recent_delay(DUCKDB, v, scope, last),
        rows_sql.runs_aggregate(DUCKDB, v).statement(DUCKDB, "x?", None, None),
        rows_sql.span_totals(DUCKDB, v, rows_sql.Scope(None, T0.isoformat(), last)),
    ]
    con = duckdb.connect(str(tmp_path / "emu" / "emulator.duckdb"), read_only=True)
    try:
        for stmt in stmts:
            bound = con.execute(stmt.sql, list(stmt.params)).fetchall()
            assert con.execute(duckdb_text(stmt)).fetchall() == bound and bound, stmt.sql
        latest = con.execute(duckdb_text(stmts[0])).fetchall()
        assert len(latest) == 12 and {r[4] for r in latest} == {"run'1"}
    finally:
        con.close()
