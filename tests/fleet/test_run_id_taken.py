"""``elastic-channels run`` refuses a --run-id the embedded emulator already holds rows
of (landed rows, or metrics rows): a second run with it would count the first one's
rows as its own duplicates. Refused before any worker starts, so no SDK is needed."""

from __future__ import annotations

import datetime as dt
import decimal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from elastic_channels.emulator import Emulator, EmulatorConfig
from elastic_channels.fleet.verify import rows_of_run
from elastic_channels.model import COLUMNS
from elastic_channels.monitor import rows
from elastic_channels.monitor.target import emulator_sink

EPOCH0 = 1_767_225_600.0


def seeded(data_dir: Path, *, landed: str | None = None, metrics: str | None = None) -> None:
    """An emulator's data in ``data_dir`` with a landed row of run ``landed`` and a
    worker window row of run ``metrics`` in ELASTIC_K8S_METRICS (written as the monitor
    writes it: through the SQL API)."""
    with Emulator(EmulatorConfig(data_dir=data_dir)) as emu:
        if landed is not None:
            values = {"RUN_ID": landed, "TXID": f"{landed}-0-0"}
            row = {n: [values.get(n, _filler(t))] for n, t in COLUMNS}
            row["_COMMIT_TIME"] = [dt.datetime.now(dt.timezone.utc)]
            emu.store.append_rows(pa.table(row))  # a landed row, as one more data file
        if metrics is not None:
            sink = emulator_sink(emu.info())
            sink.ensure_table()
            line = {"run_id": metrics, "worker_id": 0, "window_start": EPOCH0,
                    "end": EPOCH0 + 1, "window_seconds": 1.0, "rows": 5}  # fmt: skip
            sink.upsert([rows.worker_row(line)])


def _filler(sf_type: str) -> object:
    if sf_type.startswith("TIMESTAMP"):
        return dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    return decimal.Decimal(0) if sf_type.startswith("NUMBER") else "x"


def run_cli(run_id: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels.cli", "run", "--run-id", run_id,
         "--duration-seconds", "1", "--target-bps", "1e5"],
        capture_output=True, text=True, timeout=120, cwd=cwd, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("landed", "metrics", "table"),
    [("again-1", None, "1 row(s) in RESORT_SALES"),
     (None, "again-1", "1 row(s) in ELASTIC_K8S_METRICS")],
)  # fmt: skip
def test_a_run_id_already_in_the_emulator_is_refused(tmp_path, landed, metrics, table):
    data_dir = tmp_path / ".elastic-channels" / "emulator"  # run's default, under its cwd
    seeded(data_dir, landed=landed, metrics=metrics)
    proc = run_cli("again-1", tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "--run-id 'again-1' is taken" in proc.stderr
    assert table in proc.stderr and "pick another --run-id" in proc.stderr
    assert proc.stdout == ""  # no worker started, nothing reported


def test_only_rows_of_that_run_id_count(tmp_path):
    seeded(tmp_path / "emu", landed="first", metrics="first")
    with Emulator(EmulatorConfig(data_dir=tmp_path / "emu")) as emu:
        assert rows_of_run(emu, "first") == {"RESORT_SALES": 1, "ELASTIC_K8S_METRICS": 1}
        assert rows_of_run(emu, "firs") == {}
        assert rows_of_run(emu, "it's-new") == {}  # quoted, not SQL


def test_a_fresh_emulator_has_no_metrics_table_and_takes_any_id(tmp_path):
    with Emulator(EmulatorConfig(data_dir=tmp_path / "emu")) as emu:
        assert rows_of_run(emu, "first") == {}
