"""The data-access layer: the same figures through a running emulator's control query
API (live) as from its files (offline); errors are QueryError/NoData, never a crash."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest
from dashboard_support import LandedRun, sql
from streamlit.testing.v1 import AppTest

from elastic_channels.dashboard import sales_sql as q
from elastic_channels.dashboard.source import EmulatorSource, NoData, QueryError


def test_live_and_offline_agree(landed_copy: LandedRun, monkeypatch: pytest.MonkeyPatch) -> None:
    from elastic_channels.emulator import Emulator, EmulatorConfig

    src = EmulatorSource(landed_copy.data_dir)
    assert not src.is_live() and src.version() is not None
    offline = src.query(q.sales_mix(src.dialect, landed_copy.run_id))
    emu = Emulator(EmulatorConfig(data_dir=landed_copy.data_dir)).start()
    try:
        assert src.is_live() and src.version() is None
        assert "live" in src.description
        live = src.query(q.sales_mix(src.dialect, landed_copy.run_id))
        keys = ["RESORT", "CATEGORY", "CUSTOMER_TYPE", "PAYMENT_METHOD"]
        assert len(live) > 100
        assert live.sort_values(keys).to_dict("records") == offline.sort_values(keys).to_dict(
            "records"
        )

        # the whole page, through the control API while the emulator serves the dir
        monkeypatch.setenv("ELASTIC_DASHBOARD_DATA_DIR", str(landed_copy.data_dir))
        page = Path(__file__).resolve().parents[2] / "python/elastic_channels/dashboard/pages"
        at = AppTest.from_file(str(page / "sales.py"), default_timeout=60).run()
        assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
        shown = next(m.value for m in at.metric if m.label == "Sales")
        assert shown == f"{landed_copy.rows_landed:,}"
    finally:
        emu.stop()
    assert not src.is_live()


def test_offline_matches_sql(landed: LandedRun) -> None:
    src = EmulatorSource(landed.data_dir)
    got = src.query(q.runs(src.dialect), times=("LAST_SALE",)).sort_values("RUN_ID")
    want = sql(
        landed.data_dir,
        "SELECT RUN_ID, count(*), sum(AMOUNT) FROM RESORT_SALES GROUP BY 1 ORDER BY 1",
    )
    assert [(r.RUN_ID, r.SALES) for r in got.itertuples()] == [(r, n) for r, n, _ in want]
    assert float(got["REVENUE"].iloc[0]) == pytest.approx(float(want[0][2]))
    assert str(got["LAST_SALE"].dtype).startswith("datetime64")


def test_errors_are_named(landed: LandedRun, tmp_path: Path) -> None:
    with pytest.raises(NoData, match="no emulator database"):
        EmulatorSource(tmp_path / "none").rows("SELECT 1")
    with pytest.raises(NoData, match=r"(?i)no_such_table"):
        EmulatorSource(landed.data_dir).rows("SELECT * FROM NO_SUCH_TABLE")
    with pytest.raises(QueryError, match=r"query on .* failed"):
        EmulatorSource(landed.data_dir).rows("SELECT nonsense(")


def test_stale_server_file_falls_back_to_the_files(landed_copy: LandedRun) -> None:
    """A server.json left by a killed emulator (its pid gone) is not a live server."""
    (landed_copy.data_dir / "server.json").write_text(json.dumps({"pid": 2**22 + 7, "port": 1}))
    src = EmulatorSource(landed_copy.data_dir)
    assert not src.is_live()
    assert int(src.query(q.runs(src.dialect))["SALES"].sum()) == landed_copy.rows_landed


def test_offline_readers_in_parallel_share_one_connection(landed_copy: LandedRun) -> None:
    """Concurrent offline queries all answer (one open per query cannot run in parallel:
    the second open joins the first's DuckDB instance, whose configuration is locked),
    and the file is free again once the last reader is done, as a run starting needs."""
    src = EmulatorSource(landed_copy.data_dir)
    db = str(landed_copy.data_dir / "emulator.duckdb")
    sales = f"SELECT count(*) AS N FROM RESORT_SALES WHERE RUN_ID = '{landed_copy.run_id}'"
    with src.session():
        with pytest.raises(duckdb.Error):  # held read-only for the whole render
            duckdb.connect(db).close()
        with ThreadPoolExecutor(max_workers=6) as pool:
            counts = list(pool.map(lambda _: int(src.query(sales)["N"].iloc[0]), range(24)))
    assert counts == [landed_copy.rows_landed] * 24
    with ThreadPoolExecutor(max_workers=4) as pool:  # without a session too
        counts = list(pool.map(lambda _: int(src.query(sales)["N"].iloc[0]), range(12)))
    assert counts == [landed_copy.rows_landed] * 12
    duckdb.connect(db).close()  # nothing holds the file any more
