"""ResortGenerator.batch_len predicts next_batch's length exactly."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from elastic_channels import model as rs
from elastic_channels.rows import ResortGenerator

RUN_IDS = ["", "run-20261130-024406", 'q"\\\x00\x1f\x7f é 😀 \u2028', "x" * rs.MAX_RUN_ID_CHARS]


@given(
    run_id=st.sampled_from(RUN_IDS),
    worker_id=st.sampled_from([0, 1, 999, rs.MAX_WORKER_ID]),
    start_seq=st.sampled_from([0, 8, 99_995, 10**18 - 3, rs.MAX_SEQ - 20_000]),
    n=st.sampled_from([0, 1, 2, rs.TABLE_LENGTH - 1, rs.TABLE_LENGTH + 1, 20_001]),
    sale_time_us=st.sampled_from([0, -1, 1_764_470_646_000_000, rs.MAX_SALE_TIME_US]),
)
def test_batch_len_equals_the_batch(run_id, worker_id, start_seq, n, sale_time_us):
    gen = ResortGenerator(run_id, worker_id, start_seq=start_seq)
    predicted = gen.batch_len(n, sale_time_us)
    assert gen.seq == start_seq  # predicting consumes nothing
    assert predicted == len(gen.next_batch(n, sale_time_us))


def test_batch_len_checks_its_arguments_like_next_batch():
    gen = ResortGenerator("r", 0)
    with pytest.raises(ValueError, match="n must be"):
        gen.batch_len(-1, 0)
    with pytest.raises(ValueError, match="sale_time_us"):
        gen.batch_len(1, rs.MAX_SALE_TIME_US + 1)
    with pytest.raises(TypeError, match="n must be an int"):
        gen.batch_len(1.5, 0)
