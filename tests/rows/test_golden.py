"""Golden NDJSON files: fixed inputs, checked-in bytes, both backends must match.

Regenerate (from the pure-Python msgspec path) after a deliberate model change:

    UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py

then review the diff of ``tests/golden/`` before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sales_oracles import check_lines, split_lines

from elastic_channels import model as rs
from elastic_channels.rows import ResortGenerator

GOLDEN_DIR = Path(__file__).parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

NASTY_RUN_ID = 'nasty "q" \\ \x00\x01\x1f\x7f\t\n\r é 🎿 \u2028 </x> -1-'

#: name -> (run_id, worker_id, start_seq, [(n, sale_time_us), ...]); the file holds
#: the batches of those successive calls, concatenated.
CASES: dict[str, tuple[str, int, int, list[tuple[int, int]]]] = {
    "plain_worker0_whole_second": (
        "run-20261130-024406",
        0,
        0,
        [(20, 1_764_470_646_000_000)],
    ),
    "nasty_run_id": (NASTY_RUN_ID, 7, 0, [(10, 1_764_470_646_123_456)]),
    "pre_1970": (
        "run-pre-epoch",
        3,
        12_345,
        [(12, -14_182_939_876_544), (3, -1)],  # 1969-07-20T20:17:40.123456Z, then -1 us
    ),
    "table_wrap_year_edges": (
        "run-wrap",
        21,  # starts 173 entries before the table's end: rows 170.. straddle it
        170,
        [(4, rs.MIN_SALE_TIME_US), (0, 0), (4, rs.MAX_SALE_TIME_US)],
    ),
    "big_ids_leap_day_many_rows": (
        "run-big",
        rs.MAX_WORKER_ID,
        rs.MAX_SEQ - 49,
        [(25, 1_709_164_800_000_000), (25, 951_782_399_999_999)],  # 2024-02-29, 2000-02-28
    ),
}


def generate(make, run_id, worker_id, start_seq, calls) -> bytes:
    g = make(run_id, worker_id, start_seq)
    out = b"".join(g.next_batch(n, t) for n, t in calls)
    assert g.seq == start_seq + sum(n for n, _ in calls)
    return out


def golden(name: str) -> bytes:
    path = GOLDEN_DIR / f"{name}.ndjson"
    if UPDATE:
        GOLDEN_DIR.mkdir(exist_ok=True)
        run_id, worker_id, start_seq, calls = CASES[name]

        def make(r, w, s):
            return ResortGenerator(r, w, start_seq=s)

        path.write_bytes(generate(make, run_id, worker_id, start_seq, calls))
    return path.read_bytes()


@pytest.mark.parametrize("name", CASES)
def test_backend_matches_golden(backend, name):
    run_id, worker_id, start_seq, calls = CASES[name]
    assert generate(backend, run_id, worker_id, start_seq, calls) == golden(name)


@pytest.mark.parametrize("name", CASES)
def test_golden_passes_the_oracles(name):
    """A regenerated golden must still be right, not just what the code says now."""
    run_id, worker_id, start_seq, calls = CASES[name]
    data = golden(name)
    lines = split_lines(data)
    assert len(lines) == sum(n for n, _ in calls) <= 50
    seq, pos = start_seq, 0
    for n, t in calls:
        chunk = b"".join(line + b"\n" for line in lines[pos : pos + n])
        assert len(check_lines(chunk, run_id, worker_id, seq, t)) == n
        seq, pos = seq + n, pos + n


def test_golden_spot_values():
    """A few bytes typed by hand, so a wrong regeneration cannot hide."""
    first = split_lines(golden("plain_worker0_whole_second"))[0]
    assert first.startswith(b'{"TXID":"run-20261130-024406-0-0","RESORT":"')
    assert first.endswith(
        b',"SALE_TIME":"2025-11-30T02:44:06Z","RUN_ID":"run-20261130-024406","WORKER_ID":0}'
    )
    nasty = split_lines(golden("nasty_run_id"))[0]
    assert (
        b'"RUN_ID":"nasty \\"q\\" \\\\ \\u0000\\u0001\\u001f\x7f\\t\\n\\r '
        b'\xc3\xa9 \xf0\x9f\x8e\xbf \xe2\x80\xa8 </x> -1-"' in nasty
    )
    pre = split_lines(golden("pre_1970"))
    assert b'"SALE_TIME":"1969-07-20T20:17:40.123456Z"' in pre[0]
    assert b'"SALE_TIME":"1969-12-31T23:59:59.999999Z"' in pre[-1]
    edges = split_lines(golden("table_wrap_year_edges"))
    assert b'"SALE_TIME":"0001-01-01T00:00:00Z"' in edges[0]
    assert b'"SALE_TIME":"9999-12-31T23:59:59.999999Z"' in edges[-1]
    big = split_lines(golden("big_ids_leap_day_many_rows"))
    assert big[-1].startswith(b'{"TXID":"run-big-2147483647-9223372036854775807",')
    assert b'"SALE_TIME":"2024-02-29T00:00:00Z"' in big[0]
    assert b'"SALE_TIME":"2000-02-28T23:59:59.999999Z"' in big[-1]


def test_no_stray_golden_files():
    assert sorted(p.stem for p in GOLDEN_DIR.glob("*.ndjson")) == sorted(CASES)
