"""Spool + lander + DuckDB store, without HTTP: bulk path, row-by-row path, recovery,
on both parse paths (``parse``: native and sql)."""

from __future__ import annotations

import json

import pytest
import zstandard
from landing_support import KEY, T_US, mixed_body, running_lander, work_dir
from landing_support import count_rows as _count

from elastic_channels.emulator.api.stats import Stats
from elastic_channels.emulator.http.bodies import BadBody, BodyTooLarge, inflate
from elastic_channels.emulator.landing.lander import Lander
from elastic_channels.emulator.storage.parquet_store import ParquetStore
from elastic_channels.emulator.storage.store import Store, StoreError
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator


def _zstd(data: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(data)


def _store(tmp_path, parse=None, kind="files", columns=COLUMNS, **kwargs):
    work = work_dir(tmp_path)
    if kind == "files":
        kwargs.setdefault("fsync", False)
    return (ParquetStore if kind == "files" else Store)(
        tmp_path / "db.duckdb", "RESORT_SALES", columns, threads=1, work_dir=work, parse=parse,
        **kwargs,
    )  # fmt: skip


@pytest.fixture
def parts(tmp_path, parse, store_kind):
    with running_lander(tmp_path, _store(tmp_path, parse, store_kind)) as parts:
        yield parts


def test_clean_requests_land_in_bulk_with_blank_lines(parts):
    store, stats, lander = parts
    gen = ResortGenerator("bulk", 0)
    for _ in range(3):  # chunk + SDK newline = a blank line between chunks
        body = gen.next_batch(500, T_US) + b"\n" + gen.next_batch(500, T_US) + b"\n"
        lander.put(KEY, "req", _zstd(body), "zstd", len(body))
    assert lander.wait_idle(30)
    assert _count(store) == 3000
    assert _count(store, "_COMMIT_TIME >= SALE_TIME") == 3000
    snap = stats.snapshot()
    assert (snap["rows_landed"], snap["rows_rejected"]) == (3000, 0)
    assert list(lander.spool_dir.iterdir()) == [], "landed entries leave the spool"


def test_bad_rows_are_rejected_and_kept_while_the_rest_lands(parts):
    store, stats, lander = parts
    body = mixed_body("mixed", 50)
    lander.put(KEY, "req-mixed", body, "identity", len(body))
    clean = ResortGenerator("clean", 0).next_batch(10, T_US)
    lander.put(KEY, "req-clean", _zstd(clean), "zstd", len(clean))
    assert lander.wait_idle(30)
    assert _count(store, "RUN_ID = 'mixed'") == 50
    assert _count(store, "RUN_ID = 'clean'") == 10
    state = stats.channel(KEY)
    assert (state.rows_parsed, state.rows_inserted, state.rows_error_count) == (63, 60, 3)
    assert "line 53" in state.last_error_message
    kept = store.query("SELECT REQUEST_ID, LINE_NUMBER FROM _EMULATOR_ERRORS ORDER BY 2")[1]
    assert kept == [("req-mixed", 51), ("req-mixed", 52), ("req-mixed", 53)]


def test_acked_spool_entries_survive_a_restart_and_unacked_ones_do_not(tmp_path, parse, store_kind):
    store = _store(tmp_path, parse, store_kind)
    lander = Lander(tmp_path / "spool", store, Stats(), fsync=False)  # never started
    body = ResortGenerator("crash", 0).next_batch(20, T_US)
    lander.put(KEY, "acked", _zstd(body), "zstd", len(body))
    (tmp_path / "spool" / "999999999999.ndjson.zst").write_bytes(b"half-written, never acked")
    store.close()

    store = _store(tmp_path, parse, store_kind)
    stats = Stats()
    lander = Lander(tmp_path / "spool", store, stats, fsync=False)
    assert not (tmp_path / "spool" / "999999999999.ndjson.zst").exists()
    lander.start()
    assert lander.wait_idle(30)
    assert _count(store, "RUN_ID = 'crash'") == 20
    lander.stop(5)
    store.close()


def test_zstd_bodies_are_checked_whole():
    one = _zstd(b"a" * 100_000)
    assert len(inflate(one, "zstd")) == 100_000
    assert len(inflate(one + _zstd(b"b" * 10), "zstd")) == 100_010
    for damaged in (one[:-4], b"not zstd at all", one + one[:10]):
        with pytest.raises(BadBody):
            inflate(damaged, "zstd")
    with pytest.raises(BodyTooLarge, match="inflates past"):
        inflate(_zstd(b"\0" * (65 << 20)), "zstd")


def test_a_table_from_another_schema_is_refused_clearly(tmp_path, store_kind):
    _store(tmp_path, None, store_kind, columns=COLUMNS[:3]).close()
    with pytest.raises(StoreError, match="use a fresh --data-dir"):
        _store(tmp_path, None, store_kind)


def test_without_the_key_check_unknown_keys_are_ignored_but_missing_ones_rejected(
    tmp_path, parse, store_kind
):
    store = _store(tmp_path, parse, store_kind, check_keys=False)
    stats = Stats()
    lander = Lander(tmp_path / "spool", store, stats, fsync=False)
    lander.start()
    gen = ResortGenerator("nocheck", 0)
    extra = b"".join(
        json.dumps({**json.loads(line), "EXTRA": 1}).encode() + b"\n"
        for line in gen.next_batch(5, T_US).splitlines()
    )
    lander.put(KEY, "extra", extra, "identity", len(extra))
    assert lander.wait_idle(30)
    row = json.loads(gen.next_batch(1, T_US))
    del row["RESORT"]
    missing = gen.next_batch(4, T_US) + json.dumps(row).encode() + b"\n"
    lander.put(KEY, "missing", missing, "identity", len(missing))
    assert lander.wait_idle(30)
    lander.stop(5)
    assert _count(store, "RUN_ID = 'nocheck'") == 9
    state = stats.channel(KEY)
    assert (state.rows_parsed, state.rows_inserted, state.rows_error_count) == (10, 9, 1)
    store.close()
