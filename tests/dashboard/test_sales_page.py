"""The "Resort sales" page, run headless by AppTest against a real run's landed rows;
every figure it shows is checked against SQL of the same data."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from dashboard_support import APP_DIR, LandedRun, sql
from streamlit.testing.v1 import AppTest

from elastic_channels.dashboard.common import LATEST
from elastic_channels.dashboard.labels import CUSTOMER_TYPE, PAYMENT_METHOD, PRICE_TIER
from elastic_channels.dashboard.labels import REGION as REGION_NAME
from elastic_channels.dashboard.sales_page import ALL_RUNS, LATEST_COLUMNS, SYNTHETIC, money
from elastic_channels.model import RESORTS

PAGE = str(APP_DIR / "pages" / "sales.py")
REGION = {r.name: REGION_NAME[r.region] for r in RESORTS}
TIER = {r.name: PRICE_TIER[r.tier] for r in RESORTS}


def render(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> AppTest:
    monkeypatch.setenv("ELASTIC_DASHBOARD_DATA_DIR", str(data_dir))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def frame(at: AppTest, first_column: str, *columns: str) -> pd.DataFrame:
    """The shown dataframe whose columns start with ``first_column, *columns``."""
    for df in at.dataframe:
        v = df.value
        if list(v.columns[: 1 + len(columns)]) == [first_column, *columns]:
            return v
    raise AssertionError(f"no table with columns {first_column, *columns}")


def test_headline_figures_match_sql(monkeypatch: pytest.MonkeyPatch, landed: LandedRun) -> None:
    at = render(monkeypatch, landed.data_dir)
    assert not at.error, [e.value for e in at.error]
    run = landed.run_id
    (sales, revenue, resorts) = sql(
        landed.data_dir,
        f"SELECT count(*), sum(AMOUNT), count(DISTINCT RESORT) FROM RESORT_SALES "
        f"WHERE RUN_ID = '{run}'",
    )[0]
    assert sales == landed.rows_landed > 0
    assert at.selectbox(key="sales_run").value == LATEST
    assert at.selectbox(key="sales_run").format_func(LATEST) == f"latest: {run}"
    assert metric(at, "Sales") == f"{sales:,}"
    assert metric(at, "Revenue (synthetic)") == money(float(revenue))
    assert metric(at, "Resorts selling") == str(resorts)
    assert [i.value for i in at.info] == [SYNTHETIC]  # said first, in words
    assert "synthetic data" in SYNTHETIC.lower()
    (p50, p99) = sql(
        landed.data_dir,
        "SELECT approx_quantile(d, 0.5), approx_quantile(d, 0.99) FROM (SELECT "
        "date_diff('millisecond', SALE_TIME, _COMMIT_TIME) AS d, _COMMIT_TIME AS c FROM "
        f"RESORT_SALES WHERE RUN_ID = '{run}') WHERE c >= (SELECT max(_COMMIT_TIME) "
        f"FROM RESORT_SALES WHERE RUN_ID = '{run}') - INTERVAL 10 SECOND",
    )[0]
    assert metric(at, "Ingest-to-visible p50") == f"{p50:,.0f} ms"
    assert metric(at, "Ingest-to-visible p99") == f"{p99:,.0f} ms"


def test_resort_and_region_tables_match_sql(
    monkeypatch: pytest.MonkeyPatch, landed: LandedRun
) -> None:
    at = render(monkeypatch, landed.data_dir)
    want = sql(
        landed.data_dir,
        "SELECT RESORT, sum(AMOUNT) AS r, count(*) FROM RESORT_SALES "
        f"WHERE RUN_ID = '{landed.run_id}' GROUP BY RESORT ORDER BY r DESC, RESORT LIMIT 10",
    )
    top = frame(at, "RESORT", "REGION", "TIER", "REVENUE", "SALES")
    assert list(top["RESORT"]) == [r for r, _, _ in want]
    assert list(top["REGION"]) == [REGION[r] for r, _, _ in want]  # "Colorado", not "CO"
    assert list(top["TIER"]) == [TIER[r] for r, _, _ in want]
    assert list(top["REVENUE"]) == pytest.approx([float(v) for _, v, _ in want])
    assert list(top["SALES"]) == [n for _, _, n in want]

    per_resort = sql(
        landed.data_dir,
        "SELECT RESORT, sum(AMOUNT) FROM RESORT_SALES "
        f"WHERE RUN_ID = '{landed.run_id}' GROUP BY RESORT",
    )
    by_region: dict[str, float] = {}
    for resort, revenue in per_resort:
        by_region[REGION[resort]] = by_region.get(REGION[resort], 0.0) + float(revenue)
    regions = frame(at, "REGION", "REVENUE", "SALES", "REVENUE_PCT")
    assert dict(zip(regions["REGION"], regions["REVENUE"], strict=True)) == pytest.approx(by_region)
    assert list(regions["REVENUE"]) == sorted(regions["REVENUE"], reverse=True)


def test_mix_passholders_and_latest_match_sql(
    monkeypatch: pytest.MonkeyPatch, landed: LandedRun
) -> None:
    at = render(monkeypatch, landed.data_dir)
    run = landed.run_id
    ph = frame(at, "RESORT", "REGION", "SALES", "PASSHOLDER_PCT")
    want = dict(
        sql(
            landed.data_dir,
            "SELECT RESORT, 100.0 * count(*) FILTER (WHERE CUSTOMER_TYPE = 'PASSHOLDER') "
            f"/ count(*) FROM RESORT_SALES WHERE RUN_ID = '{run}' GROUP BY RESORT",
        )
    )
    assert dict(zip(ph["RESORT"], ph["PASSHOLDER_PCT"], strict=True)) == pytest.approx(want)
    assert list(ph["PASSHOLDER_PCT"]) == sorted(ph["PASSHOLDER_PCT"], reverse=True)

    for kind, names in (("CUSTOMER_TYPE", CUSTOMER_TYPE), ("PAYMENT_METHOD", PAYMENT_METHOD)):
        counts = sql(
            landed.data_dir,
            f"SELECT {kind}, count(*) FROM RESORT_SALES WHERE RUN_ID = '{run}' GROUP BY 1",
        )
        shown = next(
            d.value for d in at.dataframe
            if "CODE" in d.value.columns and set(d.value["CODE"]) == {c for c, _ in counts}
        )  # fmt: skip
        assert dict(zip(shown["CODE"], shown["SALES"], strict=True)) == dict(counts)
        # readable names, not the codes the table holds
        assert list(shown["NAME"]) == [names[c] for c in shown["CODE"]]

    latest = frame(at, "SALE_TIME", "RESORT")
    want_latest = sql(
        landed.data_dir,
        "SELECT RESORT, date_diff('millisecond', SALE_TIME, _COMMIT_TIME), "
        "strftime(SALE_TIME AT TIME ZONE 'UTC', '%H:%M:%S.%g') FROM RESORT_SALES "
        f"WHERE RUN_ID = '{run}' AND _COMMIT_TIME >= (SELECT max(_COMMIT_TIME) FROM "
        f"RESORT_SALES WHERE RUN_ID = '{run}') - INTERVAL 10 SECOND "
        "ORDER BY _COMMIT_TIME DESC, TXID LIMIT 50",
    )
    assert list(zip(latest["RESORT"], latest["DELAY_MS"], latest["SALE_TIME"], strict=True)) == [
        tuple(r) for r in want_latest
    ]
    # every column has a width that holds what it shows (none cut off, none scrolled away)
    assert list(latest.columns) == list(LATEST_COLUMNS)
    widths = [c["width"] for c in LATEST_COLUMNS.values()]
    assert all(isinstance(w, int) for w in widths) and sum(widths) <= 1000
    assert LATEST_COLUMNS["SALE_TIME"]["width"] >= 8 * len("18:18:47.823") + 10


def test_all_runs_option_counts_every_run(
    monkeypatch: pytest.MonkeyPatch, landed: LandedRun
) -> None:
    at = render(monkeypatch, landed.data_dir)
    at.selectbox(key="sales_run").set_value("(all runs)").run()
    assert not at.exception
    (total,) = sql(landed.data_dir, "SELECT count(*) FROM RESORT_SALES")[0]
    assert metric(at, "Sales") == f"{total:,}"


def test_empty_table_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from elastic_channels.emulator import Emulator, EmulatorConfig

    Emulator(EmulatorConfig(data_dir=tmp_path / "emu")).start().stop()
    at = render(monkeypatch, tmp_path / "emu")
    assert not at.error
    assert any("No sales landed yet" in i.value for i in at.info)
    assert not at.metric


def test_missing_data_dir_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    at = render(monkeypatch, tmp_path / "nothing-here")
    assert not at.error
    assert any("No sales table yet" in i.value for i in at.info)


def test_latest_follows_a_new_run(monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun) -> None:
    """With the page open on '(latest run)', a run started later becomes what it shows
    on the next rerun, the query cache kept (offline, it follows the files)."""
    from dashboard_support import run_into

    at = render(monkeypatch, landed_copy.data_dir)
    assert metric(at, "Sales") == f"{landed_copy.rows_landed:,}"
    second = run_into(landed_copy.data_dir, seconds=2)  # more rows land
    assert second.run_id != landed_copy.run_id
    at.run()
    assert not at.exception and not at.error
    assert at.selectbox(key="sales_run").value == LATEST
    assert at.selectbox(key="sales_run").format_func(LATEST) == f"latest: {second.run_id}"
    (sales,) = sql(
        landed_copy.data_dir, f"SELECT count(*) FROM RESORT_SALES WHERE RUN_ID = '{second.run_id}'"
    )[0]
    assert sales == second.rows_landed
    assert metric(at, "Sales") == f"{sales:,}"
    at.selectbox(key="sales_run").set_value(ALL_RUNS).run()
    ((total,),) = sql(landed_copy.data_dir, "SELECT count(*) FROM RESORT_SALES")
    assert total == landed_copy.rows_landed + second.rows_landed
    assert metric(at, "Sales") == f"{total:,}"


def test_revenue_reads_as_money() -> None:
    assert money(870_123_456.0) == "$870M"
    assert money(2_504_999.0) == "$2.50M"
    assert money(1_738_612_345.67) == "$1.74B"
    assert money(950_400.0) == "$950K"
    assert money(12.5) == "$12.50"


def test_an_unexpected_result_is_a_message(
    monkeypatch: pytest.MonkeyPatch, landed: LandedRun
) -> None:
    """A result of the wrong shape (here: the resorts query answers something else) is
    said on the page; the page does not crash into a traceback."""
    from elastic_channels.dashboard import sales_sql

    monkeypatch.setattr(sales_sql, "recent_delay", lambda d, scope, last: "SELECT 1 AS X")
    at = render(monkeypatch, landed.data_dir)
    assert [e.value for e in at.error] == [
        "Could not draw the sales: KeyError: 'DELAY_P50_MS'. The dashboard's log has the "
        "details; please report it."
    ]
