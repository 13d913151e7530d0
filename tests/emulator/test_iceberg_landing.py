"""Spool + lander + the Iceberg store, without HTTP: rows land as Iceberg commits, with the
native path's casts and errors, queried through the same SQL; compaction; restarts."""

from __future__ import annotations

import json
import time
from contextlib import closing

import pyarrow.parquet as pq
import pytest
import zstandard
from landing_support import KEY, T_US, mixed_body, put_each, running_lander, work_dir
from landing_support import count_rows as _count

pytest.importorskip("pyiceberg")

from elastic_channels.emulator.api.stats import Stats
from elastic_channels.emulator.landing.lander import Lander
from elastic_channels.emulator.storage import iceberg_compact
from elastic_channels.emulator.storage.iceberg_store import IcebergStore
from elastic_channels.emulator.storage.iceberg_table import LANDED_PROPERTY
from elastic_channels.emulator.storage.store import Store, StoreError
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator


def _open(tmp_path, **kwargs) -> IcebergStore:
    return IcebergStore(
        tmp_path / "db.duckdb", "RESORT_SALES", COLUMNS, threads=1, work_dir=work_dir(tmp_path),
        **kwargs,
    )  # fmt: skip


@pytest.fixture
def parts(tmp_path, parse):
    with running_lander(tmp_path, _open(tmp_path, compact=False, parse=parse)) as parts:
        yield parts


def test_an_empty_table_is_queryable_with_its_types(tmp_path):
    store = _open(tmp_path, compact=False)
    try:
        assert _count(store) == 0
        _cols, rows = store.query("DESCRIBE RESORT_SALES")
        types = {r[0]: r[1] for r in rows}
        assert types["SALE_TIME"] == "TIMESTAMP WITH TIME ZONE"
        # NUMBER(9,0) as Snowflake writes it to a Snowflake-managed Iceberg table:
        # decimal(9,0), not Iceberg int.
        assert types["AMOUNT"] == "DECIMAL(14,2)" and types["QUANTITY"] == "DECIMAL(9,0)"
        field = store.iceberg.table.schema().find_field("QUANTITY")
        assert str(field.field_type) == "decimal(9, 0)" and field.required
    finally:
        store.close()


def test_each_landed_batch_is_one_iceberg_commit_recording_its_requests(parts):
    store, stats, lander = parts
    gen = ResortGenerator("ice", 0)
    for i in range(3):
        body = gen.next_batch(400, T_US) + b"\n"
        lander.put(KEY, f"req-{i}", zstandard.ZstdCompressor().compress(body), "zstd", len(body))
        assert lander.wait_idle(30)  # one batch each
    assert _count(store) == 1200
    assert _count(store, "_COMMIT_TIME >= SALE_TIME") == 1200
    snaps = store.iceberg.table.metadata.snapshots
    recorded = [json.loads(s.summary.additional_properties[LANDED_PROPERTY]) for s in snaps]
    assert [[r[1] for r in rec] for rec in recorded] == [["req-0"], ["req-1"], ["req-2"]]
    assert [rec[0][7:9] for rec in recorded] == [[400, 400]] * 3  # parsed, inserted
    # The same records are in DuckDB, and the view reads exactly the current files.
    landed = store.query("SELECT REQUEST_ID, ROWS_INSERTED FROM _EMULATOR_LANDED ORDER BY SEQ")
    assert landed[1] == [("req-0", 400), ("req-1", 400), ("req-2", 400)]
    assert store.iceberg.table.scan().to_arrow().num_rows == 1200
    assert stats.snapshot()["rows_landed"] == 1200


def test_bad_rows_are_rejected_as_on_the_native_table(parts, tmp_path):
    store, stats, lander = parts
    body = mixed_body("mixed", 50, lambda row: [{**row, "QUANTITY": 1e12}])
    lander.put(KEY, "req-mixed", body, "identity", len(body))
    assert lander.wait_idle(30)
    assert _count(store, "RUN_ID = 'mixed'") == 50
    state = stats.channel(KEY)
    assert (state.rows_parsed, state.rows_inserted, state.rows_error_count) == (54, 50, 4)
    # The same messages the native (DuckDB) store gives on the SQL path for the same body.
    native_dir = tmp_path / "native"
    native_dir.mkdir()
    (native_dir / "spool-work").mkdir()
    native = Store(native_dir / "n.duckdb", "RESORT_SALES", COLUMNS, threads=1,
                   work_dir=native_dir / "spool-work", parse="sql")  # fmt: skip
    nstats = Stats()
    nlander = Lander(native_dir / "spool", native, nstats, fsync=False)
    nlander.start()
    nlander.put(KEY, "req-mixed", body, "identity", len(body))
    assert nlander.wait_idle(30)
    nlander.stop(10)
    q = "SELECT LINE_NUMBER, MESSAGE FROM _EMULATOR_ERRORS ORDER BY LINE_NUMBER"
    assert store.query(q)[1] == native.query(q)[1]
    assert len(store.query(q)[1]) == 4
    native.close()


def test_restart_reads_the_same_table_and_refuses_the_other_format(tmp_path):
    store = _open(tmp_path, compact=False)
    stats = Stats()
    lander = Lander(tmp_path / "spool", store, stats, fsync=False)
    lander.start()
    body = ResortGenerator("again", 0).next_batch(100, T_US)
    lander.put(KEY, "r", body, "identity", len(body))
    assert lander.wait_idle(30)
    lander.stop(10)
    store.close()
    again = _open(tmp_path, compact=False)
    try:
        assert _count(again) == 100
        assert again.max_landed_seq() == 1
    finally:
        again.close()
    with pytest.raises(StoreError, match="Iceberg table"):
        Store(tmp_path / "db.duckdb", "RESORT_SALES", COLUMNS, threads=1)
    # Offline (read-only) queries read the Iceberg files through the persisted view.
    offline = Store(tmp_path / "db.duckdb", "RESORT_SALES", COLUMNS, threads=1, read_only=True)
    with closing(offline):
        assert _count(offline) == 100


def test_compaction_merges_small_files_and_keeps_every_row(tmp_path, monkeypatch):
    monkeypatch.setattr(iceberg_compact, "MIN_FILES", 4)
    monkeypatch.setattr(iceberg_compact, "GRACE_S", 3600.0)
    monkeypatch.setattr(iceberg_compact, "ROW_GROUP_ROWS", 500)
    gen = ResortGenerator("small", 0)
    # compacted by hand below
    with running_lander(tmp_path, _open(tmp_path, compact=False)) as (store, _stats, lander):
        put_each(lander, (gen.next_batch(200, T_US) for _ in range(6)), "r")
        assert len(store.iceberg.data_files()) == 6
        before = sorted(store.query("SELECT TXID, AMOUNT, _COMMIT_TIME FROM RESORT_SALES")[1])
        assert store.compactor.compact_once()
        (merged,) = store.iceberg.data_files()
        assert merged.record_count == 1200
        # Streamed a row group at a time (what bounds a merge's memory).
        assert (
            pq.ParquetFile(merged.file_path.removeprefix("file://")).num_row_groups == 2
        )  # 600 + 600
        assert store.iceberg.table.scan(row_filter="RUN_ID == 'small'").to_arrow().num_rows == 1200
        assert len(store.iceberg.table.metadata.snapshots) == 1  # older ones expired
        after = sorted(store.query("SELECT TXID, AMOUNT, _COMMIT_TIME FROM RESORT_SALES")[1])
        assert after == before and len(after) == 1200
        data = store.iceberg.warehouse / "PUBLIC" / "RESORT_SALES" / "data"
        assert len(list(data.glob("*"))) == 7, "replaced files wait out the grace period"
        assert not store.compactor.compact_once()  # nothing small enough left to merge
    assert len(list(data.glob("*"))) == 1, "at stop, files no snapshot refers to are deleted"
    with closing(_open(tmp_path, compact=False)) as again:
        assert _count(again) == 1200


def test_the_background_compactor_merges_after_commits(tmp_path, monkeypatch):
    monkeypatch.setattr(iceberg_compact, "MIN_FILES", 3)
    gen = ResortGenerator("bg", 0)
    # with its compactor thread
    with running_lander(tmp_path, _open(tmp_path)) as (store, _stats, lander):
        put_each(lander, (gen.next_batch(100, T_US) for _ in range(3)), "r")
        deadline = time.monotonic() + 30
        while store.compactor.compactions == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store.compactor.compactions >= 1
        assert len(store.iceberg.data_files()) < 3
        assert _count(store) == 300
        assert store.iceberg_summary()["files_written"] >= 4  # 3 flushes + 1 merged


def test_a_request_of_only_bad_rows_still_commits_its_record(parts):
    store, stats, lander = parts
    body = b'{"TXID": 1}\nnot json\n'
    lander.put(KEY, "req-bad", body, "identity", len(body))
    assert lander.wait_idle(30)
    assert _count(store) == 0
    landed = store.query("SELECT ROWS_PARSED, ROWS_INSERTED FROM _EMULATOR_LANDED")[1]
    assert landed == [(2, 0)]
    snap = store.iceberg.table.current_snapshot()
    assert json.loads(snap.summary.additional_properties[LANDED_PROPERTY])[0][1] == "req-bad"
    assert stats.channel(KEY).rows_error_count == 2


def test_an_iceberg_store_refuses_a_native_database(tmp_path):
    (tmp_path / "spool-work").mkdir()
    Store(tmp_path / "db.duckdb", "RESORT_SALES", COLUMNS, threads=1).close()
    with pytest.raises(StoreError, match="native table"):
        _open(tmp_path, compact=False)
