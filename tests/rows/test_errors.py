"""Bad input: the same exception class on both backends, a message naming the
argument, never a panic, and no state change."""

from __future__ import annotations

import enum

import pytest

from elastic_channels import model as rs
from elastic_channels.rows import ResortGenerator

NOW_US = 1_764_470_646_123_456
HUGE = 2**200


class Three(enum.IntEnum):
    THREE = 3


class Index:
    """Not an int, but usable as one (``operator.index``), like numpy integers."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


# --- constructor ----------------------------------------------------------------------

BAD_RUN_ID_TYPES = [5, b"run", None, ["run"], 1.5]


@pytest.mark.parametrize("run_id", BAD_RUN_ID_TYPES, ids=repr)
def test_run_id_not_str_is_type_error(backend, run_id):
    with pytest.raises(TypeError, match="run_id"):
        backend(run_id, 0)


@pytest.mark.parametrize(
    "run_id",
    ["\ud800", "ok\udfff", "a\ud83c\udfbfb", "\udc80" * 3],
    ids=["high", "low", "pair", "x3"],
)
def test_run_id_lone_surrogate_is_unicode_encode_error(backend, run_id):
    """Even a surrogate *pair* written as two code points is not valid UTF-8."""
    with pytest.raises(UnicodeEncodeError, match="run_id") as info:
        backend(run_id, 0)
    assert info.value.reason.startswith("run_id:")
    assert info.value.object == run_id
    assert run_id[info.value.start] in "\ud800\udfff\ud83c\udc80"


@pytest.mark.parametrize(
    "run_id", ["r" * 129, "🎿" * 129, "\x00" * 1000], ids=lambda s: f"len{len(s)}"
)
def test_run_id_too_long_is_value_error(backend, run_id):
    with pytest.raises(ValueError, match="run_id") as info:
        backend(run_id, 0)
    assert not isinstance(info.value, UnicodeError)


def test_run_id_at_max_length_is_fine(backend):
    for run_id in ("r" * rs.MAX_RUN_ID_CHARS, "🎿" * rs.MAX_RUN_ID_CHARS):
        assert backend(run_id, 0).next_batch(1, NOW_US).count(run_id.encode()) == 2


@pytest.mark.parametrize("worker_id", ["1", 1.0, None, b"1", 1 + 0j], ids=repr)
def test_worker_id_not_int_is_type_error(backend, worker_id):
    with pytest.raises(TypeError, match="worker_id"):
        backend("r", worker_id)


@pytest.mark.parametrize(
    "worker_id", [-1, rs.MAX_WORKER_ID + 1, 2**63, 2**64, HUGE, -HUGE], ids=str
)
def test_worker_id_out_of_range_is_value_error(backend, worker_id):
    with pytest.raises(ValueError, match="worker_id"):
        backend("r", worker_id)


@pytest.mark.parametrize("start_seq", ["0", 0.0, None, b"0"], ids=repr)
def test_start_seq_not_int_is_type_error(backend, start_seq):
    with pytest.raises(TypeError, match="start_seq"):
        backend("r", 0, start_seq)


@pytest.mark.parametrize("start_seq", [-1, rs.MAX_SEQ + 1, 2**64, HUGE, -HUGE], ids=str)
def test_start_seq_out_of_range_is_value_error(backend, start_seq):
    with pytest.raises(ValueError, match="start_seq"):
        backend("r", 0, start_seq)


# --- next_batch -------------------------------------------------------------------------

BAD_CALLS = [
    # (n, sale_time_us, exception, argument named)
    ("1", NOW_US, TypeError, "n"),
    (1.0, NOW_US, TypeError, "n"),
    (None, NOW_US, TypeError, "n"),
    (-1, NOW_US, ValueError, "n"),
    (rs.MAX_BATCH_ROWS + 1, NOW_US, ValueError, "n"),
    (HUGE, NOW_US, ValueError, "n"),
    (-HUGE, NOW_US, ValueError, "n"),
    (1, "0", TypeError, "sale_time_us"),
    (1, float(NOW_US), TypeError, "sale_time_us"),
    (1, None, TypeError, "sale_time_us"),
    (1, rs.MIN_SALE_TIME_US - 1, ValueError, "sale_time_us"),
    (1, rs.MAX_SALE_TIME_US + 1, ValueError, "sale_time_us"),
    (1, HUGE, ValueError, "sale_time_us"),
    (1, -HUGE, ValueError, "sale_time_us"),
    (0, rs.MAX_SALE_TIME_US + 1, ValueError, "sale_time_us"),  # even for no rows
]


@pytest.mark.parametrize(("n", "t", "exc", "arg"), BAD_CALLS, ids=lambda v: repr(v)[:20])
def test_bad_next_batch_raises_and_keeps_seq(backend, n, t, exc, arg):
    g = backend("r", 4, 1000)
    g.next_batch(3, NOW_US)
    with pytest.raises(exc, match=rf"\b{arg}\b"):
        g.next_batch(n, t)
    assert g.seq == 1003
    # the generator carries on exactly where it was
    assert g.next_batch(2, NOW_US) == backend("r", 4, 1003).next_batch(2, NOW_US)


def test_n_past_max_seq_is_value_error_and_keeps_seq(backend):
    g = backend("r", 0, rs.MAX_SEQ - 1)
    with pytest.raises(ValueError, match=r"\bn=3\b"):
        g.next_batch(3, NOW_US)
    assert g.seq == rs.MAX_SEQ - 1
    g.next_batch(2, NOW_US)
    assert g.seq == rs.MAX_SEQ + 1
    with pytest.raises(ValueError, match=r"\bn=1\b"):
        g.next_batch(1, NOW_US)
    assert g.seq == rs.MAX_SEQ + 1


def test_max_batch_rows_is_accepted(backend):
    g = backend("r", 0)
    assert g.next_batch(rs.MAX_BATCH_ROWS, NOW_US).count(b"\n") == rs.MAX_BATCH_ROWS
    assert g.seq == rs.MAX_BATCH_ROWS


# --- ints that are not exactly int --------------------------------------------------------


def test_bool_is_an_int_like_python(backend):
    a = backend("r", True, True).next_batch(True, True)
    b = backend("r", 1, 1).next_batch(1, 1)
    assert a == b and a.count(b"\n") == 1
    assert backend("r", False, False).next_batch(False, False) == b""


def test_index_objects_are_ints_like_python(backend):
    a = backend("r", Index(3), Three.THREE).next_batch(Index(2), Three.THREE)
    assert a == backend("r", 3, 3).next_batch(2, 3)


# --- the two backends agree, message and all -----------------------------------------


def _error(call):
    try:
        call()
    except Exception as e:
        return type(e), str(e)
    return None


CONSTRUCTOR_CASES = [
    *[((r, 0), {}) for r in BAD_RUN_ID_TYPES],
    (("\ud800", 0), {}),
    (("r" * 129, 0), {}),
    (("r", -1), {}),
    (("r", HUGE), {}),
    (("r", "1"), {}),
    (("r", 0), {"start_seq": -1}),
    (("r", 0), {"start_seq": rs.MAX_SEQ + 1}),
    (("r", 0), {"start_seq": "0"}),
    (("r", 0), {"start_seq": None}),
    (("\ud800", -1), {"start_seq": "x"}),  # several bad: the first one is reported
    ((5, "x"), {"start_seq": -1}),
    (("r", HUGE), {"start_seq": None}),
]


@pytest.mark.parametrize(("args", "kwargs"), CONSTRUCTOR_CASES, ids=lambda v: repr(v)[:24])
def test_constructor_errors_identical_on_both_backends(native, args, kwargs):
    want = _error(lambda: ResortGenerator(*args, **kwargs))
    assert want is not None
    assert _error(lambda: native.ResortGenerator(*args, **kwargs)) == want


#: (start_seq, n, sale_time_us): one or more arguments bad at once.
NEXT_BATCH_CASES = [
    *[(1000, n, t) for n, t, _, _ in BAD_CALLS],
    (1000, "x", "y"),
    (1000, -1, "y"),
    (1000, "x", rs.MAX_SALE_TIME_US + 1),
    (rs.MAX_SEQ, 2, NOW_US),
    (rs.MAX_SEQ, 2, rs.MAX_SALE_TIME_US + 1),  # n carries seq past MAX_SEQ, time bad too
    (rs.MAX_SEQ, 2, "not a time"),
    (rs.MAX_SEQ, 2, None),
]


@pytest.mark.parametrize(("start_seq", "n", "t"), NEXT_BATCH_CASES, ids=lambda v: repr(v)[:20])
def test_next_batch_errors_identical_on_both_backends(native, start_seq, n, t):
    """Same class and same message, whichever arguments are bad together."""
    py = ResortGenerator("r", 1, start_seq=start_seq)
    nat = native.ResortGenerator("r", 1, start_seq=start_seq)
    want = _error(lambda: py.next_batch(n, t))
    assert want is not None
    assert _error(lambda: nat.next_batch(n, t)) == want
    assert nat.seq == py.seq == start_seq
