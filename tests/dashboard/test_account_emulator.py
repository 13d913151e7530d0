"""The pages on an account, read through a real SQL API: the emulator's (Snowflake's
dialect, key-pair JWT over HTTPS), with its info file as ``--profile``. Each page shows
what the same page shows reading the emulator's data dir, and a run id is sent as a
binding: the red team's ``a\\' OR 1=1 --`` selects nothing."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import APP_DIR, LandedRun, copy_dir, fleet_windows, write_metrics
from streamlit.testing.v1 import AppTest
from workload_rows import Batch, write_rows

from elastic_channels.dashboard import metrics_sql as m
from elastic_channels.dashboard import rows_sql
from elastic_channels.dashboard import sales_sql as q
from elastic_channels.dashboard.account import AccountSource
from elastic_channels.dashboard.dialect import SNOWFLAKE
from elastic_channels.dashboard.landing import load_view
from elastic_channels.workload import load_workload

EVIL = "a\\' OR 1=1 --"


@pytest.fixture(scope="module")
def served(
    landed: LandedRun, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LandedRun, Path]]:
    """The landed run's data dir with its metrics and a clickstream table, served by an
    emulator; and the emulator's info file."""
    from elastic_channels.emulator import Emulator, EmulatorConfig

    tmp = tmp_path_factory.mktemp("account")
    run = LandedRun(copy_dir(landed.data_dir, tmp / "emu"), landed.run_id, landed.rows_landed)
    write_metrics(run.data_dir, run.run_id, fleet_windows(run.run_id, time.time() - 30, 30))
    sent = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=20)
    write_rows(run.data_dir, load_workload("clickstream"), [
        Batch("c1", 0, 12, sent), Batch("c2", 1, 30, sent + dt.timedelta(seconds=2)),
    ])  # fmt: skip
    emu = Emulator(EmulatorConfig(data_dir=run.data_dir)).start()
    try:
        info = tmp / "info.json"
        info.write_text(json.dumps(emu.info()))
        yield run, info
    finally:
        emu.stop()


def _page(monkeypatch: pytest.MonkeyPatch, page: str, **env: str) -> AppTest:
    for name, value in env.items():
        monkeypatch.setenv(f"ELASTIC_DASHBOARD_{name.upper()}", value)
    at = AppTest.from_file(str(APP_DIR / "pages" / page), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _metrics(at: AppTest) -> dict[str, Any]:
    return {x.label: x.value for x in at.metric}


def _both(
    monkeypatch: pytest.MonkeyPatch, served: tuple[LandedRun, Path], page: str, **env: str
) -> tuple[AppTest, AppTest]:
    """``page`` on the account (the SQL API) and on the data dir (the emulator's control
    query API, DuckDB's dialect)."""
    run, info = served
    on_account = _page(monkeypatch, page, profile=str(info), **env)
    monkeypatch.delenv("ELASTIC_DASHBOARD_PROFILE")
    on_dir = _page(monkeypatch, page, data_dir=str(run.data_dir), **env)
    assert any("account EMULATOR" in c.value for c in on_account.sidebar.caption)
    assert [e.value for e in on_account.error] == [e.value for e in on_dir.error]
    return on_account, on_dir


def test_sales_page_on_the_account(
    monkeypatch: pytest.MonkeyPatch, served: tuple[LandedRun, Path]
) -> None:
    on_account, on_dir = _both(monkeypatch, served, "sales.py")
    got = _metrics(on_account)
    assert got == _metrics(on_dir) and not on_account.error
    assert got["Sales"] == f"{served[0].rows_landed:,}"


def test_run_page_on_the_account(
    monkeypatch: pytest.MonkeyPatch, served: tuple[LandedRun, Path]
) -> None:
    on_account, on_dir = _both(monkeypatch, served, "run.py")
    got = _metrics(on_account)
    assert got == _metrics(on_dir)
    assert got["Workers"] == "3" and got["Landed"] == f"{served[0].rows_landed:,}"
    # the failed worker (the data's) is said alike; nothing else is an error
    assert [e.value for e in on_account.error] == [
        next(e.value for e in on_account.error if e.value.startswith("Worker 2 failed"))
    ]


def test_latest_rows_page_on_the_account(
    monkeypatch: pytest.MonkeyPatch, served: tuple[LandedRun, Path]
) -> None:
    on_account, on_dir = _both(monkeypatch, served, "rows.py", workload="clickstream")
    assert _metrics(on_account) == _metrics(on_dir) and not on_account.error
    assert _metrics(on_account)["Rows in the run"] == "30"
    (shown,), (expected,) = on_account.dataframe, on_dir.dataframe
    assert shown.value.equals(expected.value)  # VARIANT as the same compact JSON text
    assert json.loads(shown.value["CONTEXT"].iloc[0])["library"]["name"] == "analytics.js"


def test_the_evil_run_id_selects_nothing_through_the_sql_api(
    served: tuple[LandedRun, Path],
) -> None:
    run, info = served
    src = AccountSource(str(info))
    d = SNOWFLAKE
    view = load_view("clickstream")
    (last,) = [r["L"] for r in src.rows(f"SELECT max({d.commit_time}) AS L FROM {q.TABLE}")]
    iso = last.isoformat()

    def queries(run_id: str) -> dict[str, Any]:
        return {
            "landed": m.landed(run_id, q.TABLE),
            "sales": q.runs_aggregate(d).statement(d, run_id, None, None),
            "latest sales": q.latest_sales(d, run_id, iso),
            "rows": rows_sql.runs_aggregate(d, view).statement(d, run_id, None, None),
        }

    for name, stmt in queries(EVIL).items():
        got = src.rows(stmt)
        assert got == [] or all(not r.get("LANDED") for r in got), (name, got[:2])
    assert src.rows(m.landed(run.run_id, q.TABLE))[0]["LANDED"] == run.rows_landed
    assert len(src.rows(q.latest_sales(d, run.run_id, iso))) > 0
    assert [r["ROWS"] for r in src.rows(queries("c2")["rows"])] == [30]
