"""The resort-sales model: profiles, TXIDs, sizes and invariants, measured from the
rows each backend writes (so every check holds for native and Python alike)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from sales_oracles import split_lines

from elastic_channels import model as rs

L = rs.TABLE_LENGTH
NOW_US = 1_764_470_646_123_456
RUN_ID = "run-20261130-024406"
TOLERANCE = 0.01  # one percentage point


def full_cycle(make, worker_id: int = 5, start_seq: int = 1234) -> list[dict]:
    """One full table cycle of rows, parsed."""
    batch = make(RUN_ID, worker_id, start_seq).next_batch(L, NOW_US)
    return [json.loads(line) for line in split_lines(batch)]


def txids(batch: bytes) -> list[bytes]:
    """The raw TXID of every row (run ids here hold no quote or backslash)."""
    head = len(b'{"TXID":"')
    return [line[head : line.index(b'","RESORT":"')] for line in split_lines(batch)]


# --- the declared model -----------------------------------------------------------


def test_42_resorts_4_categories():
    assert len(rs.RESORTS) == 42
    assert len({r.name for r in rs.RESORTS}) == 42
    assert rs.CATEGORIES == ("SEASON_PASS", "DAY_TICKET", "FOOD_BEV", "MERCH")
    assert set(rs.ITEMS) == set(rs.CATEGORIES)
    for r in rs.RESORTS:
        assert r.volume > 0
        assert r.mix in rs.CATEGORY_MIXES
        assert r.tier in rs.PRICE_TIERS
        assert 0 <= r.passholder_pct <= 100


# --- profiles over a full table cycle ----------------------------------------------


@pytest.fixture
def cycle(backend) -> list[dict]:
    return full_cycle(backend)


def test_resort_shares_match_volumes(cycle):
    total_volume = sum(r.volume for r in rs.RESORTS)
    counts = Counter(row["RESORT"] for row in cycle)
    assert set(counts) == {r.name for r in rs.RESORTS}
    for r in rs.RESORTS:
        expected = r.volume / total_volume
        assert abs(counts[r.name] / L - expected) <= TOLERANCE, (r.name, counts[r.name])


def test_overall_category_mix(cycle):
    total_volume = sum(r.volume for r in rs.RESORTS)
    expected = dict.fromkeys(rs.CATEGORIES, 0.0)
    for r in rs.RESORTS:
        mix = rs.CATEGORY_MIXES[r.mix]
        for category, weight in zip(rs.CATEGORIES, mix, strict=False):
            expected[category] += r.volume / total_volume * weight / sum(mix)
    counts = Counter(row["CATEGORY"] for row in cycle)
    assert set(counts) == set(rs.CATEGORIES)
    for category in rs.CATEGORIES:
        assert abs(counts[category] / L - expected[category]) <= TOLERANCE, category


def test_passholder_share_per_resort_and_overall(cycle):
    total_volume = sum(r.volume for r in rs.RESORTS)
    per_resort = Counter(row["RESORT"] for row in cycle)
    passholders = Counter(row["RESORT"] for row in cycle if row["CUSTOMER_TYPE"] == "PASSHOLDER")
    for r in rs.RESORTS:
        share = passholders[r.name] / per_resort[r.name]
        assert abs(share - r.passholder_pct / 100) <= TOLERANCE, (r.name, share)
    expected = sum(r.volume * r.passholder_pct for r in rs.RESORTS) / total_volume / 100
    assert abs(sum(passholders.values()) / L - expected) <= TOLERANCE


def test_passholders_never_buy_day_tickets(cycle):
    assert any(row["CATEGORY"] == "DAY_TICKET" for row in cycle)
    assert any(row["CUSTOMER_TYPE"] == "PASSHOLDER" for row in cycle)
    bad = [r for r in cycle if r["CUSTOMER_TYPE"] == "PASSHOLDER" and r["CATEGORY"] == "DAY_TICKET"]
    assert bad == []


def test_amount_is_unit_price_times_quantity_to_the_cent(cycle):
    for row in cycle:
        unit_cents = round(row["UNIT_PRICE"] * 100)
        amount_cents = round(row["AMOUNT"] * 100)
        assert abs(row["UNIT_PRICE"] * 100 - unit_cents) < 1e-6, row  # whole cents
        assert abs(row["AMOUNT"] * 100 - amount_cents) < 1e-6, row
        assert amount_cents == unit_cents * row["QUANTITY"], row
        assert row["QUANTITY"] >= 1


def test_items_prices_customers_payments_follow_the_model(cycle):
    tiers = {r.name: rs.PRICE_TIERS[r.tier] for r in rs.RESORTS}
    for row in cycle:
        base = dict(rs.ITEMS[row["CATEGORY"]])[row["ITEM"]]  # item belongs to category
        exact = base * tiers[row["RESORT"]] / 100  # base price x tier multiplier
        assert abs(round(row["UNIT_PRICE"] * 100) - exact) <= 0.5, row
        assert row["QUANTITY"] in dict(rs.QUANTITIES[row["CATEGORY"]]), row
        assert row["PAYMENT_METHOD"] in dict(rs.PAYMENT_MIX[row["CUSTOMER_TYPE"]]), row


# --- TXIDs --------------------------------------------------------------------------


def test_txid_unique_over_1m_rows(backend):
    g = backend(RUN_ID, 3, 0)
    seen: set[bytes] = set()
    for _ in range(10):
        seen.update(txids(g.next_batch(100_000, NOW_US)))
    assert g.seq == 1_000_000
    assert len(seen) == 1_000_000
    assert f"{RUN_ID}-3-999999".encode() in seen


def test_txid_unique_across_workers_and_run_ids(backend):
    """Run ids that are dash-prefixes of each other still cannot collide: a TXID
    splits back into exactly its (run_id, worker_id, seq)."""
    run_ids = ["run", "run-1", "run-1-2", "", "-", "run-12"]
    workers = [0, 1, 2, 12, 21, rs.MAX_WORKER_ID]
    seen: dict[bytes, tuple[str, int, int]] = {}
    for run_id in run_ids:
        for worker_id in workers:
            for start_seq in (0, 10, 120):
                g = backend(run_id, worker_id, start_seq)
                for k, t in enumerate(txids(g.next_batch(300, NOW_US))):
                    key = (run_id, worker_id, start_seq + k)
                    if t in seen:
                        assert seen[t] == key and start_seq > 0, (t, seen[t], key)
                        continue  # same row generated again from a later start_seq
                    seen[t] = key
                    r, w, s = t.decode().rsplit("-", 2)
                    assert (r, int(w), int(s)) == key
    assert len(seen) == len(run_ids) * len(workers) * 420


# --- sizes, offsets, determinism ---------------------------------------------------------


@pytest.mark.parametrize(
    ("worker_id", "start_seq"), [(0, 0), (454, 10**9)], ids=["fresh", "long_run"]
)
def test_average_row_size(backend, worker_id, start_seq):
    batch = backend(RUN_ID, worker_id, start_seq).next_batch(L, NOW_US)
    average = len(batch) / L
    assert 250 <= average <= 310, average


def test_workers_start_at_different_offsets(backend):
    def body(line: bytes) -> bytes:  # the row without TXID and WORKER_ID
        return line[line.index(b'","RESORT":"') : line.index(b',"WORKER_ID":')]

    firsts = []
    for worker_id in range(32):
        lines = split_lines(backend(RUN_ID, worker_id).next_batch(8, NOW_US))
        firsts.append(tuple(body(line) for line in lines))
    assert len({f[0] for f in firsts}) == 32  # first rows all differ
    assert len(set(firsts)) == 32


def test_same_inputs_same_bytes(backend):
    calls = [(5, NOW_US), (0, 0), (L + 3, -1), (1, rs.MAX_SALE_TIME_US)]
    a = backend(RUN_ID, 77, 9)
    b = backend(RUN_ID, 77, 9)
    out_a = [a.next_batch(n, t) for n, t in calls]
    out_b = [b.next_batch(n, t) for n, t in calls]
    assert out_a == out_b
    assert a.seq == b.seq == 9 + L + 9
    different = backend(RUN_ID, 78, 9).next_batch(5, NOW_US)
    assert different != out_a[0]
