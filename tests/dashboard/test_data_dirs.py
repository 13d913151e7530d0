"""Without --data-dir the dashboard reads the data dir ``run`` wrote the workload's rows
to last (issue #22 item 7): of ``.elastic-channels/emulator``, ``emulator-iceberg``,
``emulator-<table>`` ..., the one an emulator serves, else the one whose data is newest,
and the page's caption says which. Checked on dirs written here and on a real
``run --workload iot-telemetry`` that names no data dir."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import APP_DIR, render
from streamlit.testing.v1 import AppTest
from workload_rows import Batch, write_rows

from elastic_channels.dashboard.data_dirs import candidates, find
from elastic_channels.fleet.run_target import default_data_dir
from elastic_channels.landing_table import landing_table
from elastic_channels.model import TABLE_NAME
from elastic_channels.workload import load_workload, shipped_names

T0 = dt.datetime(2026, 12, 2, 10, 0, tzinfo=dt.timezone.utc)


def _age(data_dir: Path, seconds_ago: float) -> None:
    """Every entry of ``data_dir`` (and one level down) last changed ``seconds_ago``."""
    when = time.time() - seconds_ago
    for root, dirs, files in os.walk(data_dir):
        for name in [*dirs, *files]:
            os.utime(Path(root) / name, (when, when))


@pytest.mark.parametrize("workload", shipped_names())
def test_the_candidates_are_where_run_writes(workload: str, tmp_path: Path) -> None:
    land = landing_table(workload)
    mine = candidates(tmp_path, load_workload(workload).table)
    for table_format in ("native", "iceberg"):
        assert default_data_dir(tmp_path, land, table_format) in mine
    assert mine[0] == default_data_dir(tmp_path, land, "native")


def test_none_one_newest_and_served(tmp_path: Path) -> None:
    from elastic_channels.emulator import Emulator, EmulatorConfig

    home = tmp_path / ".elastic-channels"
    got = find(home, TABLE_NAME)
    assert got.data_dir == home / "emulator" and "no data dir" in got.why
    iot = load_workload("iot-telemetry")
    native, iceberg = candidates(home, iot.table)[0], candidates(home, iot.table)[1]
    assert (native.name, iceberg.name) == (
        "emulator-iot_telemetry",
        "emulator-iot_telemetry-iceberg",
    )
    write_rows(native, iot, [Batch("a", 0, 3, T0)])
    got = find(home, iot.table)
    assert got.data_dir == native and "the only data dir" in got.why
    write_rows(iceberg, iot, [Batch("b", 0, 3, T0)])
    _age(native, 60)
    assert find(home, iot.table).data_dir == iceberg
    _age(iceberg, 120)
    got = find(home, iot.table)
    assert got.data_dir == native and got.why == (
        "emulator-iot_telemetry: its data is newer than emulator-iot_telemetry-iceberg's"
    )
    assert find(home, TABLE_NAME).data_dir == home / "emulator"  # another table's: none
    # a served data dir wins, however old its files
    emu = Emulator(EmulatorConfig(data_dir=iceberg)).start()
    try:
        _age(iceberg, 300)
        got = find(home, iot.table)
        assert got.data_dir == iceberg and "an emulator serves it now" in got.why
    finally:
        emu.stop()


def test_the_page_reads_the_newest_and_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = tmp_path / ".elastic-channels"
    iot = load_workload("iot-telemetry")
    native, iceberg = candidates(home, iot.table)[:2]
    write_rows(native, iot, [Batch("older", 0, 5, T0)])
    write_rows(iceberg, iot, [Batch("newer", 0, 7, T0)])
    _age(native, 60)
    monkeypatch.setenv("ELASTIC_DASHBOARD_HOME", str(home))
    monkeypatch.setenv("ELASTIC_DASHBOARD_WORKLOAD", "iot-telemetry")
    at = AppTest.from_file(str(APP_DIR / "pages" / "rows.py"), default_timeout=60).run()
    assert not at.exception and not at.error
    assert at.selectbox(key="rows_run").options == ["latest: newer", "newer"]
    said = [c.value for c in at.caption if "picked" in c.value]
    assert said == [
        f"Reading emulator data dir {iceberg} (offline: no emulator running); picked "
        "emulator-iot_telemetry-iceberg: its data is newer than emulator-iot_telemetry's."
    ]


@pytest.fixture(scope="module")
def iot_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A real ``run --workload iot-telemetry`` from a fresh directory, no --data-dir:
    it keeps its emulator's data under that directory's ``.elastic-channels``."""
    cwd = tmp_path_factory.mktemp("iot-run")
    cmd = [
        sys.executable, "-m", "elastic_channels", "run", "--workload", "iot-telemetry",
        "--workers", "1", "--target-bps", "1e6", "--duration-seconds", "2", "--json",
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=240, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    return cwd / ".elastic-channels", json.loads(lines[-1])


def test_a_real_workload_run_found_and_shown(
    monkeypatch: pytest.MonkeyPatch, iot_run: tuple[Path, dict[str, Any]]
) -> None:
    home, run = iot_run
    landed = int(run["landed"]["rows_landed"])
    assert landed > 0 and run["landed"]["lost"] == 0
    monkeypatch.setenv("ELASTIC_DASHBOARD_HOME", str(home))
    monkeypatch.setenv("ELASTIC_DASHBOARD_WORKLOAD", "iot-telemetry")
    rows = AppTest.from_file(str(APP_DIR / "pages" / "rows.py"), default_timeout=60).run()
    assert not rows.exception and not rows.error, [e.value for e in rows.error]
    assert any("picked emulator-iot_telemetry:" in c.value for c in rows.caption)
    got = {m.label: m.value for m in rows.metric}
    assert got["Rows in the run"] == f"{landed:,}"
    assert got["Ingest-to-visible p50"].endswith(" ms")
    (table,) = rows.dataframe
    tags = table.value["TAGS"]
    assert all(t == json.dumps(json.loads(t), separators=(",", ":")) for t in tags)
    assert set(json.loads(tags.iloc[0])) == {"site", "zone", "fw"}
    assert set(table.value["RUN_ID"]) == {run["run_id"]}
    at = render(monkeypatch, "run.py", home / "emulator-iot_telemetry")
    got = {m.label: m.value for m in at.metric}
    assert (got["Landed"], got["Duplicates"], got["Lost"]) == (f"{landed:,}", "0", "0")
