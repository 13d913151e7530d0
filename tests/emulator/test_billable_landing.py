"""The emulator counts the billable bytes (the values' bytes: elastic_channels/billable.py)
of the rows it lands, server-side, on both parse paths and both stores: the count the
generator made as it wrote them."""

from __future__ import annotations

import pytest
import zstandard
from landing_support import KEY, T_US, running_lander, work_dir

from elastic_channels.emulator.storage.parquet_store import ParquetStore
from elastic_channels.emulator.storage.store import Store
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator


@pytest.fixture
def parts(tmp_path, parse, store_kind):
    kind = ParquetStore if store_kind == "files" else Store
    extra = {"fsync": False} if store_kind == "files" else {}
    store = kind(tmp_path / "db.duckdb", "RESORT_SALES", COLUMNS, threads=1,
                 work_dir=work_dir(tmp_path), parse=parse, **extra)  # fmt: skip
    with running_lander(tmp_path, store) as parts:
        yield parts


def test_landed_rows_bill_what_the_generator_counted(parts):
    _, stats, lander = parts
    gen = ResortGenerator('b"é', 7)
    want = 0
    for i in range(3):
        body = gen.next_batch(400, T_US)
        want += gen.last_billable_bytes
        lander.put(KEY, f"req-{i}", zstandard.ZstdCompressor().compress(body), "zstd", len(body))
    nothing = b'{"TXID": "x"}\nnot json\n'  # no row of it lands: it bills nothing
    lander.put(KEY, "req-bad", nothing, "identity", len(nothing))
    assert lander.wait_idle(30)
    snap = stats.snapshot()
    assert snap["rows_landed"] == 1200
    assert snap["billable_bytes"] == want > 0
