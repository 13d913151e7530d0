"""Both pages on a run that landed into the emulator's Iceberg table (issue #16: the
dashboard unchanged by the table format). The figures shown are checked against
pyiceberg's own scan of the table, a reader that knows nothing of the emulator."""

from __future__ import annotations

from pathlib import Path

import pytest
from dashboard_support import metric, render, run_into
from emulator_support import sdk_available

from elastic_channels.dashboard.sales_page import money

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")
pytest.importorskip("pyiceberg")


def test_both_pages_show_an_iceberg_runs_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow.compute as pc
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.expressions import EqualTo

    data_dir = tmp_path / "emu-ice"
    landed = run_into(data_dir, seconds=3, monitor=True, table_format="iceberg")
    warehouse = data_dir / "iceberg"
    catalog = SqlCatalog(
        "emulator", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=f"file://{warehouse}"
    )
    rows = (
        catalog.load_table("PUBLIC.RESORT_SALES")
        .scan(row_filter=EqualTo("RUN_ID", landed.run_id))
        .to_arrow()
    )
    assert rows.num_rows == landed.rows_landed > 0

    sales = render(monkeypatch, "sales.py", data_dir)
    assert not sales.error, [e.value for e in sales.error]
    assert metric(sales, "Sales") == f"{rows.num_rows:,}"
    revenue = float(pc.sum(rows["AMOUNT"]).as_py())
    assert metric(sales, "Revenue (synthetic)") == money(revenue)
    assert metric(sales, "Resorts selling") == str(pc.count_distinct(rows["RESORT"]).as_py())

    run = render(monkeypatch, "run.py", data_dir)
    assert not run.error, [e.value for e in run.error]
    assert metric(run, "Landed") == f"{rows.num_rows:,}"
