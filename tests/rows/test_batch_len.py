"""ResortGenerator.batch_len predicts next_batch's length exactly, on both backends,
and refuses what next_batch refuses, with the same exception and message."""

from __future__ import annotations

import operator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elastic_channels import model as rs
from elastic_channels.rows import ResortGenerator

RUN_IDS = ["", "run-20261130-024406", 'q"\\\x00\x1f\x7f é 😀 \u2028', "x" * rs.MAX_RUN_ID_CHARS]
NOW_US = 1_764_470_646_123_456
HUGE = 2**200


# `backend` is a stateless factory, so sharing it across examples is safe.
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    run_id=st.sampled_from(RUN_IDS),
    worker_id=st.sampled_from([0, 1, 999, rs.MAX_WORKER_ID]),
    start_seq=st.sampled_from([0, 8, 99_995, 10**18 - 3, rs.MAX_SEQ - 20_000]),
    n=st.sampled_from([0, 1, 2, rs.TABLE_LENGTH - 1, rs.TABLE_LENGTH + 1, 20_001]),
    sale_time_us=st.sampled_from([0, -1, 1_764_470_646_000_000, rs.MAX_SALE_TIME_US]),
)
def test_batch_len_equals_the_batch(backend, run_id, worker_id, start_seq, n, sale_time_us):
    gen = backend(run_id, worker_id, start_seq)
    predicted = gen.batch_len(n, sale_time_us)
    assert gen.seq == start_seq  # predicting consumes nothing
    assert predicted == len(gen.next_batch(n, sale_time_us))


def test_batch_len_checks_its_arguments_like_next_batch(backend):
    gen = backend("r", 0)
    with pytest.raises(ValueError, match="n must be"):
        gen.batch_len(-1, 0)
    with pytest.raises(ValueError, match="sale_time_us"):
        gen.batch_len(1, rs.MAX_SALE_TIME_US + 1)
    with pytest.raises(TypeError, match="n must be an int"):
        gen.batch_len(1.5, 0)
    assert gen.seq == 0


class Index:
    """Not an int, but usable as one (``operator.index``), like numpy integers."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


@pytest.mark.parametrize(("n", "t"), [(True, NOW_US), (Index(7), Index(NOW_US)), (False, 1)])
def test_batch_len_takes_the_ints_next_batch_takes(backend, n, t):
    gen = backend("r", 5, 100)
    predicted = gen.batch_len(n, t)
    assert predicted == len(gen.next_batch(n, t)) == len(backend("r", 5, 100).next_batch(n, t))
    assert gen.seq == 100 + operator.index(n)


def _error(call):
    try:
        call()
    except Exception as e:
        return type(e), str(e)
    return None


#: Arguments that are fine but would carry seq past MAX_SEQ.
EXHAUSTED = [(rs.MAX_SEQ - 1, 3, NOW_US), (rs.MAX_SEQ, 2, NOW_US)]

#: (start_seq, n, sale_time_us), one or more of them bad.
BAD_CASES = [
    (1000, "1", NOW_US),
    (1000, 1.0, NOW_US),
    (1000, None, NOW_US),
    (1000, -1, NOW_US),
    (1000, rs.MAX_BATCH_ROWS + 1, NOW_US),
    (1000, HUGE, NOW_US),
    (1000, -HUGE, NOW_US),
    (1000, 1, "0"),
    (1000, 1, float(NOW_US)),
    (1000, 1, None),
    (1000, 1, rs.MIN_SALE_TIME_US - 1),
    (1000, 1, rs.MAX_SALE_TIME_US + 1),
    (1000, 1, -HUGE),
    (1000, 0, rs.MAX_SALE_TIME_US + 1),  # even for no rows
    (1000, "x", "y"),  # several bad: the first one is reported
    (1000, -1, "y"),
    (rs.MAX_SEQ, 2, rs.MAX_SALE_TIME_US + 1),
    (rs.MAX_SEQ, 2, None),
    *EXHAUSTED,
]


@pytest.mark.parametrize(("start_seq", "n", "t"), BAD_CASES, ids=lambda v: repr(v)[:20])
def test_batch_len_raises_what_next_batch_raises(backend, start_seq, n, t):
    """Same class and message as the Python generator's ``next_batch`` (the oracle,
    itself checked against the native one in test_errors.py); nothing consumed."""
    want = _error(lambda: ResortGenerator("r", 1, start_seq=start_seq).next_batch(n, t))
    assert want is not None
    gen = backend("r", 1, start_seq)
    assert _error(lambda: gen.batch_len(n, t)) == want
    assert gen.seq == start_seq
