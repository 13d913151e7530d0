"""Byte parity on every shipped workload: the native generator writes exactly what the
msgspec generator writes, for batches of many sizes, sequence numbers, worker ids and
run ids; both size a batch exactly; and every line holds what the resolved table and
the row's inputs say it holds (an oracle that calls neither generator)."""

from __future__ import annotations

import datetime as dt
import json

import msgspec
import pytest

from elastic_channels import model
from elastic_channels.workload import shipped_names

SHIPPED = shipped_names()

NOW_US = 1_764_470_646_123_456
UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
RUN_IDS = ["run-20261130-024406", "", 'q"\\\x00\x1f é 😀 \u2028', "🎿" * model.MAX_RUN_ID_CHARS]
#: (worker_id, start_seq, batch sizes, send times)
INPUTS = [
    (0, 0, [1, 2, 7, 100], [0, -1, NOW_US, 1]),
    (3, 9_999_990, [11, 5_000], [NOW_US, model.MAX_SALE_TIME_US]),
    (model.MAX_WORKER_ID, 8_191, [8_193], [model.MIN_SALE_TIME_US]),
    (77, model.MAX_SEQ - 9, [3, 7], [NOW_US, NOW_US + 500_000]),
]


@pytest.mark.parametrize("name", SHIPPED)
@pytest.mark.parametrize("run_id", RUN_IDS, ids=["plain", "empty", "escapes", "longest"])
@pytest.mark.parametrize("worker_id, start_seq, sizes, times", INPUTS, ids=["a", "b", "c", "d"])
def test_native_writes_what_msgspec_writes(
    replays, make_pair, name, run_id, worker_id, start_seq, sizes, times
):
    fast, oracle = make_pair(replays[name], run_id, worker_id, start_seq)
    for n, t in zip(sizes, times, strict=True):
        assert fast.batch_len(n, t) == oracle.batch_len(n, t)
        got, want = fast.next_batch(n, t), oracle.next_batch(n, t)
        assert got == want, f"{name} n={n} t={t}: first difference at byte {_diff(got, want)}"
    assert fast.seq == oracle.seq == start_seq + sum(sizes)


def _diff(a: bytes, b: bytes) -> int:
    pairs = enumerate(zip(a, b, strict=False))
    return next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))


@pytest.mark.parametrize("name", SHIPPED)
def test_batches_continue_where_the_last_one_ended(replays, make_pair, name):
    whole, _ = make_pair(replays[name], "r", 9, 100)
    parts, _ = make_pair(replays[name], "r", 9, 100)
    one = whole.next_batch(9_000, NOW_US)
    assert one == b"".join(parts.next_batch(n, NOW_US) for n in (1, 999, 8_000))


def _send_time(column_type: str, us: int) -> str:
    t = EPOCH + dt.timedelta(microseconds=us)
    if column_type == "DATE":
        return t.date().isoformat()
    text = t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{t.microsecond:06d}" if t.microsecond else "")
    return text if column_type == "TIMESTAMP_NTZ" else text + "Z"


@pytest.mark.parametrize("name", SHIPPED)
def test_every_line_holds_the_entry_and_the_inputs(replays, make_pair, name):
    """The oracle: each line, parsed, is the resolved entry's values plus the inputs."""
    replay = replays[name]
    resolved, w = replay.resolved(), replay.workload
    fast, _ = make_pair(replay, 'run-"7"', 12, 4_000)
    t = NOW_US + 7
    lines = fast.next_batch(300, t).splitlines()
    assert len(lines) == 300
    for k, line in enumerate(lines):
        seq = 4_000 + k
        row = json.loads(line)
        assert list(row) == [c.name for c in w.columns]
        entry = resolved.entry_values[(12 * resolved.table.stride + seq) % resolved.table.entries]
        for c, (kind, arg) in zip(w.columns, resolved.parts, strict=True):
            value = row[c.name]
            if kind == "entry":
                assert value == json.loads(msgspec.json.encode(entry[arg])), c.name
            elif kind == "constant":
                assert value == json.loads(msgspec.json.encode(arg)), c.name
            elif kind == "unique_id":
                assert value == f'run-"7"-12-{seq}'
            elif kind == "run_id":
                assert value == 'run-"7"'
            elif kind == "worker_id":
                assert value == ("12" if arg else 12)
            else:
                assert value == _send_time(c.type.kind, t), c.name


def test_shipped_workloads_have_the_promised_shapes(native, replays):
    """Row sizes and shapes as docs/WORKLOADS.md states them."""
    sizes = {}
    for name, replay in replays.items():
        gen = native.WorkloadGenerator(replay.native_table(), "run-20261130-024406", 17)
        sizes[name] = gen.batch_len(10_000, NOW_US) / 10_000
    assert 250 < sizes["resort-sales"] < 300
    assert 300 < sizes["iot-telemetry"] < 400
    assert 900 < sizes["clickstream"] < 1300
    assert 3500 < sizes["wide-events"] < 4500
    assert len(replays["wide-events"].workload.columns) == 60
    kinds = {c.type.kind for c in replays["clickstream"].workload.columns}
    assert "VARIANT" in kinds
