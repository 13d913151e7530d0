"""The native table stored as Parquet files and a view (``parquet_store.py``): what a
batch writes and commits, what a restart removes, merging, and the data dirs it refuses
or leaves to the DuckDB-table store."""

from __future__ import annotations

import time

import duckdb
import pyarrow.parquet as pq
import pytest
from landing_support import T_US, land_each
from landing_support import work_dir as _work

from elastic_channels.emulator.emulator import DB_FILE, _open_store_nicer
from elastic_channels.emulator.storage import parquet_compact
from elastic_channels.emulator.storage.parquet_store import LegacyTableError, ParquetStore
from elastic_channels.emulator.storage.store import FILES_DIR, Store, StoreError
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator

CHECKSUM = (
    "SELECT count(*), count(DISTINCT TXID), sum(AMOUNT), sum(QUANTITY), "
    "min(SALE_TIME), max(SALE_TIME) FROM RESORT_SALES"
)


def _open(tmp_path, **kwargs):
    kwargs.setdefault("fsync", False)
    return ParquetStore(
        tmp_path / DB_FILE, "RESORT_SALES", COLUMNS, threads=1, work_dir=_work(tmp_path),
        **kwargs,
    )  # fmt: skip


def _land(store, tmp_path, bodies, parse_name="run"):
    """Each body a request of its own, each request its own landing batch."""
    land_each(store, tmp_path, bodies, parse_name)


def _registered(store):
    return sorted(
        r[0] for r in store.connection.execute("SELECT NAME FROM _EMULATOR_FILES").fetchall()
    )


def _on_disk(tmp_path):
    return sorted(p.name for p in (tmp_path / FILES_DIR).glob("*.parquet"))


def test_a_batch_is_one_registered_file_read_through_the_view_with_the_tables_types(
    tmp_path, parse
):
    store = _open(tmp_path / "files", parse=parse)
    table = Store(
        tmp_path / "table" / DB_FILE, "RESORT_SALES", COLUMNS, threads=1, parse=parse,
        work_dir=_work(tmp_path / "table"),
    )  # fmt: skip
    gen = ResortGenerator("types", 0)
    bodies = [gen.next_batch(300, T_US) for _ in range(3)]
    _land(store, tmp_path / "files", bodies)
    _land(table, tmp_path / "table", bodies)
    assert len(_registered(store)) == 3 == len(_on_disk(tmp_path / "files"))
    assert _registered(store) == _on_disk(tmp_path / "files")
    summary = store.files_summary()  # what `stats` shows as data_files
    assert (summary["data_files"], summary["rows"], summary["compactions"]) == (3, 900, 0)
    on_disk = sum(p.stat().st_size for p in (tmp_path / "files" / FILES_DIR).glob("*.parquet"))
    assert summary["bytes"] == on_disk
    described = "SELECT column_name, column_type FROM (DESCRIBE RESORT_SALES)"
    assert store.query(described)[1] == table.query(described)[1]
    # the same rows, byte for byte in every column but the commit time
    cols = ", ".join(n for n, _ in COLUMNS)
    rows = f"SELECT {cols} FROM RESORT_SALES ORDER BY TXID"
    assert store.query(rows)[1] == table.query(rows)[1]
    assert store.query("SELECT count(*) FROM RESORT_SALES WHERE _COMMIT_TIME >= SALE_TIME")[1] == [
        (900,)
    ]
    store.close()
    table.close()


def test_files_no_commit_refers_to_are_removed_at_start_and_the_rest_kept(tmp_path):
    store = _open(tmp_path)
    _land(store, tmp_path, [ResortGenerator("orphans", 0).next_batch(50, T_US)])
    kept = _registered(store)
    store.close()
    stray = tmp_path / FILES_DIR / "land-0123456789abcdef.parquet"  # written, never committed
    stray.write_bytes((tmp_path / FILES_DIR / kept[0]).read_bytes())
    (tmp_path / FILES_DIR / "merged-x.parquet.tmp").write_bytes(b"half")
    store = _open(tmp_path)
    assert _on_disk(tmp_path) == kept == _registered(store)
    assert not list((tmp_path / FILES_DIR).glob("*.tmp"))
    assert store.query("SELECT count(*) FROM RESORT_SALES")[1] == [(50,)]
    store.close()


def test_a_failed_commit_leaves_no_file_and_no_rows(tmp_path):
    store = _open(tmp_path)
    body = ResortGenerator("fails", 0).next_batch(40, T_US)

    def crash(point):
        if point == "land:before-commit":
            raise duckdb.IOException("disk went away")

    from elastic_channels.emulator.landing.batch_sql import Body

    record = lambda results: ([], [])  # noqa: E731
    with pytest.raises(duckdb.IOException):
        store.land({"1": Body(tmp_path / "w", body)}, record, crash)
    assert _on_disk(tmp_path) == [] == _registered(store)
    assert store.query("SELECT count(*) FROM RESORT_SALES")[1] == [(0,)]
    store.close()


def test_merging_keeps_every_row_and_bounds_the_files(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet_compact, "FAN_IN", 4)
    monkeypatch.setattr(parquet_compact, "RETIRE_GRACE_S", 0.0)
    store = _open(tmp_path, compact=False)  # merged by hand below, deterministically
    gen = ResortGenerator("merge", 0)
    _land(store, tmp_path, [gen.next_batch(200 + i, T_US) for i in range(17)])
    before = store.query(CHECKSUM)[1]
    assert len(_registered(store)) == 17
    merges = 0
    while store.compactor.compact_once():
        merges += 1
    # 17 level-0 files: four merges into level 1, then one of those four into level 2
    assert merges == 5
    levels = store.connection.execute(
        "SELECT LEVEL, count(*) FROM _EMULATOR_FILES GROUP BY ALL ORDER BY 1"
    ).fetchall()
    assert levels == [(0, 1), (2, 1)]
    assert store.query(CHECKSUM)[1] == before
    assert store.compactor.delete_retired(grace_s=0.0) == 16 + 4
    assert _on_disk(tmp_path) == _registered(store)
    merged = [n for n in _registered(store) if n.startswith("merged-")]
    assert pq.read_metadata(tmp_path / FILES_DIR / merged[0]).num_rows == sum(
        200 + i for i in range(16)
    )
    store.close()
    store = _open(tmp_path)  # and after a restart
    assert store.query(CHECKSUM)[1] == before
    store.close()


def test_a_merged_away_file_is_kept_for_readers_until_its_grace_ends(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet_compact, "FAN_IN", 2)
    store = _open(tmp_path, compact=False)
    gen = ResortGenerator("grace", 0)
    _land(store, tmp_path, [gen.next_batch(10, T_US) for _ in range(2)])
    old = _on_disk(tmp_path)
    assert store.compactor.compact_once()
    assert set(old) < set(_on_disk(tmp_path))  # still there for queries that bound them
    assert store.compactor.delete_retired() == 0  # within the grace
    assert store.compactor.delete_retired(grace_s=0.0) == 2
    assert _on_disk(tmp_path) == _registered(store)
    store.close()


def test_the_background_compactor_merges_as_batches_land(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet_compact, "FAN_IN", 3)
    store = _open(tmp_path)
    gen = ResortGenerator("bg", 0)
    _land(store, tmp_path, [gen.next_batch(20, T_US) for _ in range(3)])
    deadline = time.monotonic() + 30
    while store.compactor.compactions < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    store.close()
    assert store.compactor.compactions == 1
    store = _open(tmp_path, compact=False)
    assert len(_registered(store)) == 1
    assert store.query("SELECT count(*) FROM RESORT_SALES")[1] == [(60,)]
    store.close()


def test_an_older_data_dir_with_a_duckdb_table_keeps_landing_into_it(tmp_path):
    old = Store(tmp_path / DB_FILE, "RESORT_SALES", COLUMNS, threads=1, work_dir=_work(tmp_path))
    _land(old, tmp_path, [ResortGenerator("old", 0).next_batch(5, T_US)])
    old.close()
    with pytest.raises(LegacyTableError, match="DuckDB table"):
        _open(tmp_path)
    store = _open_store_nicer(
        tmp_path / DB_FILE, "RESORT_SALES", COLUMNS, threads=1, fsync=False,
        work_dir=_work(tmp_path),
    )  # fmt: skip
    assert type(store) is Store
    _land(store, tmp_path, [ResortGenerator("old", 1).next_batch(7, T_US)])
    assert store.query("SELECT count(*) FROM RESORT_SALES")[1] == [(12,)]
    store.close()


def test_an_iceberg_data_dir_and_a_files_data_dir_refuse_each_other(tmp_path):
    pytest.importorskip("pyiceberg")
    from elastic_channels.emulator.storage.iceberg_store import IcebergStore

    _open(tmp_path / "native").close()
    with pytest.raises(StoreError, match="native table"):
        IcebergStore(
            tmp_path / "native" / DB_FILE, "RESORT_SALES", COLUMNS, threads=1, compact=False
        )
    IcebergStore(
        tmp_path / "ice" / DB_FILE, "RESORT_SALES", COLUMNS, threads=1, compact=False
    ).close()
    with pytest.raises(StoreError, match="Iceberg table"):
        _open(tmp_path / "ice")


def test_a_stopped_emulators_files_are_read_offline(tmp_path):
    from elastic_channels.emulator.control import query_offline

    store = _open(tmp_path)
    _land(store, tmp_path, [ResortGenerator("offline", 0).next_batch(25, T_US)])
    store.close()
    got = query_offline(tmp_path, "SELECT count(*) AS n FROM RESORT_SALES")
    assert got == [b'{"n":25}\n']


def test_only_columns_whose_values_repeat_are_dictionary_encoded(tmp_path):
    store = _open(tmp_path)
    _land(store, tmp_path, [ResortGenerator("dict", 0).next_batch(2000, T_US)])
    assert store.dictionary is not None
    assert "TXID" not in store.dictionary  # unique per row
    # a batch's rows share their SALE_TIME (one time per generated batch)
    assert {"RESORT", "CATEGORY", "RUN_ID", "SALE_TIME", "_COMMIT_TIME"} <= set(store.dictionary)
    (name,) = _registered(store)
    meta = pq.read_metadata(tmp_path / FILES_DIR / name).row_group(0)
    encoded = {
        meta.column(i).path_in_schema: any("DICTIONARY" in e for e in meta.column(i).encodings)
        for i in range(meta.num_columns)
    }
    assert encoded == {n: n in store.dictionary for n in encoded}
    store.close()


def test_a_data_dir_moved_elsewhere_reads_and_lands_there(tmp_path):
    import shutil

    from elastic_channels.emulator.control import query_offline

    store = _open(tmp_path / "before")
    _land(store, tmp_path / "before", [ResortGenerator("moved", 0).next_batch(30, T_US)])
    store.close()
    shutil.move(tmp_path / "before", tmp_path / "after")  # nothing left where it was
    count = "SELECT count(*) AS n FROM RESORT_SALES"
    assert query_offline(tmp_path / "after", count) == [b'{"n":30}\n']
    store = _open(tmp_path / "after")
    _land(store, tmp_path / "after", [ResortGenerator("moved", 1).next_batch(12, T_US)])
    assert store.query(count)[1] == [(42,)]
    store.close()


def test_row_groups_stay_small_in_landed_and_merged_files(tmp_path, monkeypatch):
    from elastic_channels.emulator.storage import parquet_files

    monkeypatch.setattr(parquet_files, "ROW_GROUP_ROWS", 100)
    monkeypatch.setattr(parquet_compact, "ROW_GROUP_ROWS", 100)
    monkeypatch.setattr(parquet_compact, "FAN_IN", 2)
    store = _open(tmp_path, compact=False)
    gen = ResortGenerator("groups", 0)
    _land(store, tmp_path, [gen.next_batch(250, T_US), gen.next_batch(130, T_US)])

    def groups(name):
        meta = pq.read_metadata(tmp_path / FILES_DIR / name)
        return [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]

    assert sorted(groups(n) for n in _registered(store)) == [[100, 30], [100, 100, 50]]
    assert store.compactor.compact_once()
    (merged,) = _registered(store)
    assert max(groups(merged)) <= 100 and sum(groups(merged)) == 380
    store.close()


def test_a_failing_merge_is_logged_and_the_files_stay_as_they_are(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(parquet_compact, "FAN_IN", 2)
    store = _open(tmp_path)
    calls = []

    def broken(sources, target):
        calls.append(target)
        target.write_bytes(b"half a file")
        raise ValueError("disk says no")

    monkeypatch.setattr(store.compactor, "_merge", broken)
    gen = ResortGenerator("broken", 0)
    _land(store, tmp_path, [gen.next_batch(10, T_US) for _ in range(2)])
    deadline = time.monotonic() + 30
    while not calls and time.monotonic() < deadline:
        time.sleep(0.05)
    store.compactor.poke()  # the thread is still there and merges again (and fails)
    while len(calls) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(calls) >= 2
    assert "merging data files failed" in caplog.text
    assert len(_registered(store)) == 2 and _on_disk(tmp_path) == _registered(store)
    assert store.query("SELECT count(*) FROM RESORT_SALES")[1] == [(20,)]
    store.close()
