"""What Python hands the native module is checked: a malformed table is a TypeError or
ValueError naming the argument (and the item), never a panic; a generator's bad
arguments raise what the msgspec generator raises, with the same message."""

from __future__ import annotations

import array

import pytest

from elastic_channels import model, rows
from elastic_channels.workload import WorkloadReplay, from_data

NOW_US = 1_764_470_646_123_456
TEMPLATE = [
    ("text", b'{"A":'),
    ("slot", b""),
    ("text", b',"ID":"'),
    ("seq", b""),
    ("text", b'"}\n'),
]
PIECES = [b"1", b"22"]
IDS = array.array("I", [0, 1]).tobytes()

BAD_TABLES = {
    "entries zero": ((0, 1, PIECES, IDS, TEMPLATE), ValueError, "entries must be between 1 and"),
    "entries text": (("2", 1, PIECES, IDS, TEMPLATE), TypeError, "entries must be an int"),
    "stride negative": ((2, -1, PIECES, IDS, TEMPLATE), ValueError, "stride must be between 0"),
    "pieces not a list": ((2, 1, b"12", IDS, TEMPLATE), TypeError, "pieces must be a list"),
    "piece not bytes": ((2, 1, ["1", b"2"], IDS, TEMPLATE), TypeError, "pieces[0] must be bytes"),
    "piece with a newline": (
        (2, 1, [b"1\n", b"2"], IDS, TEMPLATE),
        ValueError,
        "pieces[0]: a piece",
    ),
    "piece not utf-8": ((2, 1, [b"\xff", b"2"], IDS, TEMPLATE), ValueError, "pieces[0]: a piece"),
    "ids not bytes": ((2, 1, PIECES, [0, 1], TEMPLATE), TypeError, "ids must be bytes"),
    "ids ragged": ((2, 1, PIECES, IDS[:-1], TEMPLATE), ValueError, "ids: 7 bytes is not a whole"),
    "ids short": ((2, 1, PIECES, IDS[:4], TEMPLATE), ValueError, "ids: 1 piece numbers, but 2"),
    "id out of range": (
        (2, 1, PIECES, array.array("I", [0, 2]).tobytes(), TEMPLATE),
        ValueError,
        "ids[1]: piece 2 of 2 pieces",
    ),
    "template not a list": ((2, 1, PIECES, IDS, "text"), TypeError, "template must be a list"),
    "token not a pair": ((2, 1, PIECES, IDS, [("text",)]), TypeError, "template[0] must be a"),
    "kind not str": ((2, 1, PIECES, IDS, [(1, b"\n")]), TypeError, "template[0][0] must be a str"),
    "payload not bytes": ((2, 1, PIECES, IDS, [("text", "\n")]), TypeError, "template[0][1] must"),
    "unknown kind": (
        (2, 1, PIECES, IDS, [("txt", b"\n")]),
        ValueError,
        "template[0]: unknown kind",
    ),
    "no newline at the end": (
        (2, 1, PIECES, IDS, [*TEMPLATE[:-1], ("text", b"}")]),
        ValueError,
        "template[4]: a row's only newline",
    ),
    "two seqs": (
        (2, 1, PIECES, IDS, [("seq", b""), *TEMPLATE]),
        ValueError,
        "template[4]: a row has at most one seq",
    ),
    "bad send time form": (
        (2, 1, PIECES, IDS, [("send_time", b"utc"), *TEMPLATE]),
        ValueError,
        "template[0]: send_time takes tz, ntz or date",
    ),
    "empty template": ((2, 1, PIECES, IDS, []), ValueError, "template: empty"),
}


@pytest.mark.parametrize("args, error, message", BAD_TABLES.values(), ids=BAD_TABLES.keys())
def test_malformed_table_names_what_is_wrong(native, args, error, message):
    with pytest.raises(error) as info:
        native.WorkloadTable(*args)
    assert str(info.value).startswith(message), str(info.value)


def test_a_good_table_writes_its_rows(native):
    table = native.WorkloadTable(2, 1, PIECES, IDS, TEMPLATE)
    assert (table.entries, table.slots) == (2, 1)
    gen = native.WorkloadGenerator(table, "r", 1, start_seq=7)
    # Worker 1 starts at entry 1 * stride % 2 = 1: seq 7 replays entry (1 + 7) % 2 = 0.
    assert gen.next_batch(3, NOW_US) == b'{"A":1,"ID":"7"}\n{"A":22,"ID":"8"}\n{"A":1,"ID":"9"}\n'
    assert gen.seq == 10


def test_generator_needs_a_table(native):
    with pytest.raises(TypeError, match="table must be a WorkloadTable, got dict"):
        native.WorkloadGenerator({}, "r", 0)


WORKLOAD = {
    "name": "w",
    "description": "d",
    "table": "T",
    "entries": 4,
    "columns": [
        {"name": "ID", "type": "VARCHAR", "unique_id": {}},
        {"name": "N", "type": "NUMBER(3,0)", "range": {"min": 0, "max": 9}},
    ],
}
#: Constructor arguments, then batch arguments, that both generators refuse.
BAD_ARGS = [
    (("r", -1), {}),
    (("r", model.MAX_WORKER_ID + 1), {}),
    (("r", "1"), {}),
    ((5, 0), {}),
    (("x" * 129, 0), {}),
    (("r", 0), {"start_seq": -1}),
    (("r", 0), {"start_seq": model.MAX_SEQ + 1}),
    (("r", 0), {"start_seq": None}),
]
BAD_BATCHES = [(-1, NOW_US), (model.MAX_BATCH_ROWS + 1, NOW_US), (1.5, NOW_US), (1, "now")]
BAD_BATCHES += [(1, model.MAX_SALE_TIME_US + 1), (1, model.MIN_SALE_TIME_US - 1)]


def _raised(call):
    try:
        call()
    except Exception as e:  # the point is to compare what each raises
        return type(e), str(e)
    return None


@pytest.mark.parametrize("args, kwargs", BAD_ARGS, ids=repr)
def test_bad_arguments_raise_alike(native, args, kwargs):
    replay = WorkloadReplay(from_data(WORKLOAD, "<test>"))
    table = replay.native_table()
    fast = _raised(lambda: native.WorkloadGenerator(table, *args, **kwargs))
    slow = _raised(lambda: rows.WorkloadGenerator(replay.resolved(), *args, **kwargs))
    assert fast is not None and fast == slow


@pytest.mark.parametrize("n, t", BAD_BATCHES, ids=repr)
def test_bad_batches_raise_alike_and_change_nothing(native, make_pair, n, t):
    fast, slow = make_pair(WorkloadReplay(from_data(WORKLOAD, "<test>")), "r", 0, 5)
    for method in ("next_batch", "batch_len"):
        got = _raised(lambda m=method: getattr(fast, m)(n, t))
        assert got is not None and got == _raised(lambda m=method: getattr(slow, m)(n, t))
    assert fast.seq == slow.seq == 5


def test_the_last_sequence_numbers(native, make_pair):
    fast, slow = make_pair(WorkloadReplay(from_data(WORKLOAD, "<test>")), "r", 0, model.MAX_SEQ - 1)
    assert _raised(lambda: fast.next_batch(3, NOW_US)) == _raised(
        lambda: slow.next_batch(3, NOW_US)
    )
    assert fast.next_batch(2, NOW_US) == slow.next_batch(2, NOW_US)
    assert fast.next_batch(0, NOW_US) == slow.next_batch(0, NOW_US) == b""
    assert fast.seq == slow.seq == model.MAX_SEQ + 1
