"""The resort-sales workload file through the runtime path writes exactly what the
compiled resort generator writes, on both backends (issue #25 item 1)."""

from __future__ import annotations

import pytest

from elastic_channels import model, rows

NOW_US = 1_764_470_646_123_456
RUN_IDS = ["run-20261130-024406", "", 'q"\\\x00\x1f é 😀 \u2028', "r" * model.MAX_RUN_ID_CHARS]
INPUTS = [
    (0, 0, [1, 2, 3]),
    (17, 999_990, [20, 8193, 1]),
    (model.MAX_WORKER_ID, 123, [model.TABLE_LENGTH * 2 + 5]),
    (5, model.MAX_SEQ - 40, [40, 1]),
]


@pytest.mark.parametrize("run_id", RUN_IDS, ids=["plain", "empty", "escapes", "longest"])
@pytest.mark.parametrize("worker_id, start_seq, sizes", INPUTS, ids=["w0", "w17", "wmax", "end"])
def test_runtime_resort_equals_compiled(
    native, replays, make_pair, run_id, worker_id, start_seq, sizes
):
    replay = replays["resort-sales"]
    runtime, runtime_py = make_pair(replay, run_id, worker_id, start_seq)
    compiled = native.ResortGenerator(run_id, worker_id, start_seq=start_seq)
    compiled_py = rows.ResortGenerator(run_id, worker_id, start_seq=start_seq)
    for i, n in enumerate(sizes):
        t = NOW_US + i * 1_000_123 - (i % 2) * 10**15
        want = compiled.next_batch(n, t)
        assert runtime.batch_len(n, t) == len(want)
        assert runtime.next_batch(n, t) == want
        assert runtime_py.next_batch(n, t) == compiled_py.next_batch(n, t) == want
    assert runtime.seq == compiled.seq == runtime_py.seq == start_seq + sum(sizes)


def test_resort_workload_declares_the_models_schema(replays):
    w = replays["resort-sales"].workload
    assert w.sql_columns == model.COLUMNS
    assert (w.table, w.pipe, w.unique_id_column) == (model.TABLE_NAME, model.PIPE_NAME, "TXID")
    table = replays["resort-sales"].resolved().table
    assert (table.entries, table.stride) == (model.TABLE_LENGTH, model.WORKER_STRIDE)
