"""The native store and its merger never follow a registered name out of ``files/``
(issue #23 item 1): a registry row naming ``../../<other data dir>/files/...``, an
absolute path or anything but a plain data file name is refused where names are read
(opening the store, the view, the merger), naming the registry and the entry; the
other data dir's file is neither read into this table nor deleted.

On main before this, such a row (then writable through the SQL API) made the background
merge read another emulator's file into this table (32,000 foreign rows) and delete it."""

from __future__ import annotations

import pytest
from landing_support import T_US, land_each
from landing_support import work_dir as _work

from elastic_channels.emulator.emulator import DB_FILE
from elastic_channels.emulator.storage import parquet_compact
from elastic_channels.emulator.storage.parquet_files import check_file_name
from elastic_channels.emulator.storage.parquet_registry import register_file
from elastic_channels.emulator.storage.parquet_store import ParquetStore
from elastic_channels.emulator.storage.store import FILES_DIR, StoreError
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator

BAD_NAMES = [
    "../../other/files/land-0123.parquet",
    "../land-0123.parquet",
    "/tmp/land-0123.parquet",
    "sub/land-0123.parquet",
    "..",
    ".parquet",
    "land-0123.parquet/..",
    "land\\0123.parquet",
    "land-0123.csv",
    "",
]


def _open(data_dir, **kwargs):
    return ParquetStore(data_dir / DB_FILE, "RESORT_SALES", COLUMNS, threads=1,
                        work_dir=_work(data_dir), fsync=False, **kwargs)  # fmt: skip


def _land(store, data_dir, bodies):
    land_each(store, data_dir, bodies, "r")


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_data_file_name_is_a_plain_name_in_files(name):
    with pytest.raises(ValueError, match="not the name of a data file"):
        check_file_name(name)


def test_the_names_the_store_makes_pass():
    assert check_file_name("land-0123456789abcdef0123456789abcdef.parquet")
    assert check_file_name("merged-0123456789abcdef0123456789abcdef.parquet")


def _other_data_dir(tmp_path):
    """Another emulator's data dir with one landed file of 500 rows."""
    other = _open(tmp_path / "other")
    _land(other, tmp_path / "other", [ResortGenerator("foreign", 0).next_batch(500, T_US)])
    (name,) = [p.name for p in (tmp_path / "other" / FILES_DIR).glob("*.parquet")]
    other.close()
    return tmp_path / "other" / FILES_DIR / name


def _plant(store, name: str) -> None:
    """A registry row written behind the store's back (a damaged or tampered database)."""
    store.connection.execute("INSERT INTO _EMULATOR_FILES VALUES (?, 500, 1, 0, now())", [name])


@pytest.mark.parametrize("absolute", [False, True], ids=["relative", "absolute"])
def test_a_registered_path_out_of_files_stops_the_store_naming_it(tmp_path, absolute):
    foreign = _other_data_dir(tmp_path)
    here = tmp_path / "here"
    store = _open(here)
    _land(store, here, [ResortGenerator("mine", 0).next_batch(50, T_US)])
    name = str(foreign) if absolute else f"../../other/{FILES_DIR}/{foreign.name}"
    _plant(store, name)
    store.close()
    with pytest.raises(StoreError, match=r"_EMULATOR_FILES is damaged: .*not the name") as e:
        _open(here)
    assert repr(name) in str(e.value)
    assert foreign.exists(), "the other data dir's file was deleted"


def test_the_merger_refuses_such_a_name_and_reads_and_deletes_nothing(
    tmp_path, monkeypatch, caplog
):
    monkeypatch.setattr(parquet_compact, "FAN_IN", 2)
    monkeypatch.setattr(parquet_compact, "RETIRE_GRACE_S", 0.0)
    foreign = _other_data_dir(tmp_path)
    here = tmp_path / "here"
    store = _open(here, compact=False)
    try:
        _land(store, here, [ResortGenerator("mine", 0).next_batch(50, T_US)])
        _plant(store, f"../../other/{FILES_DIR}/{foreign.name}")
        with pytest.raises(StoreError, match="_EMULATOR_FILES is damaged"):
            store.compactor.compact_once()
        store.compactor.delete_retired(grace_s=0.0)
        assert foreign.exists()
        assert store.connection.execute(
            "SELECT sum(ROW_COUNT) FROM _EMULATOR_FILES WHERE NAME LIKE 'merged-%'"
        ).fetchone() == (None,)
    finally:
        store.close()


def test_registering_a_path_is_refused(tmp_path):
    store = _open(tmp_path)
    try:
        with pytest.raises(ValueError, match="not the name of a data file"):
            register_file(store.connection, "../x.parquet", 1, 1)
    finally:
        store.close()


def test_a_missing_registry_is_named_not_taken_for_an_iceberg_table(tmp_path):
    """A data dir whose registry is gone (renamed away before the SQL API refused it) is
    damaged, and the error says so; on main it said 'is an Iceberg table'."""
    store = _open(tmp_path)
    _land(store, tmp_path, [ResortGenerator("gone", 0).next_batch(5, T_US)])
    store.connection.execute("ALTER TABLE _EMULATOR_FILES RENAME TO FILES_GONE")
    store.close()
    with pytest.raises(StoreError, match=r"_EMULATOR_FILES.*is missing") as e:
        _open(tmp_path)
    assert "Iceberg" not in str(e.value) and "emulator.duckdb" in str(e.value)
