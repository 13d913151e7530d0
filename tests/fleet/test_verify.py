"""fleet.verify on a table of known TXIDs: a killed worker's bounds, the row-size floor
they rest on, and the pacing bound against the real Pacer."""

from __future__ import annotations

import inspect
import random

import duckdb
import pytest

from elastic_channels import rows
from elastic_channels.fleet.verify import (
    BURST_S,
    CHANNEL_SEQ_STRIDE,
    MAX_QUANTUM_S,
    describe,
    killed_bounds,
    min_row_bytes,
    verify_landed,
)
from elastic_channels.worker.pacing import Pacer

RUN = "verify-run"
T0 = 1_767_225_600.0


def backends() -> list[str]:
    out = ["python"]
    try:
        rows.make_generator(RUN, 0, start_seq=0, backend="native")
        out.append("native")
    except Exception:  # not built
        pass
    return out


@pytest.mark.parametrize("backend", backends())
@pytest.mark.parametrize(("run_id", "worker_id"), [("r", 0), ("run-20260101-000000", 454)])
def test_no_row_is_shorter_than_the_floor(backend: str, run_id: str, worker_id: int) -> None:
    floor = min_row_bytes(run_id, worker_id)
    gen = rows.make_generator(run_id, worker_id, start_seq=0, backend=backend)
    lengths = []
    for stamp in (1_767_225_600_000_000, 1_767_225_600_123_456):  # whole and fraction
        lengths += [len(x) + 1 for x in gen.next_batch(20_000, stamp).splitlines()]
    assert min(lengths) >= floor
    assert floor > 0.6 * sum(lengths) / len(lengths)  # a floor worth having


def test_the_constants_are_the_workers() -> None:
    assert inspect.signature(Pacer).parameters["burst_seconds"].default == BURST_S
    from elastic_channels.worker.multi import CHANNEL_SEQ_STRIDE as stride

    assert stride == CHANNEL_SEQ_STRIDE
    assert MAX_QUANTUM_S == 1.0  # --sleep-quantum-ms is checked to be at most 1000


def _clock_of(now: list[float]):
    return lambda: now[0]


def test_the_pacing_bound_holds_against_the_real_pacer() -> None:
    """The worker's send loop on a fake clock (send a batch, book it, sleep only a
    quantum ahead; stalls of up to 3 s): whatever instant it dies at, the rows it sent
    after any earlier instant stay within ``killed_bounds``."""
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    rate, batch_bytes, row_bytes = 2e6, 200_000, 150
    for _ in range(40):
        now = [0.0]
        quantum = rng.choice([0.0, 0.25, 1.0])
        pacer = Pacer(rate, sleep_quantum=quantum, clock=_clock_of(now))
        n = batch_bytes // 250  # rows_per_batch from a mean row of 250 bytes
        sent: list[tuple[float, int]] = []
        while now[0] < 30:
            now[0] += rng.choice([0.0, 0.0, 0.001, 0.01, rng.uniform(0, 3)])  # work, stalls
            nbytes = n * rng.randint(row_bytes, 400)  # every row at least row_bytes long
            sent.append((now[0], n))
            wait = pacer.delay(nbytes)
            now[0] += wait
        for _ in range(50):
            t = rng.uniform(0, 25)
            death = rng.uniform(t, 30)
            after = sum(r for at, r in sent if t < at <= death)
            window = {"end": t, "rows": 0}
            _, bound = killed_bounds(
                [window], 0.0, death, {"target_bps": rate, "batch_bytes": batch_bytes}, row_bytes
            )
            assert bound is not None and after <= bound, f"seed {seed}"


class TableEmu:
    """What verify_landed needs of an emulator, over a DuckDB table of known rows."""

    def __init__(self, landed: list[tuple[int, int]]) -> None:
        self.con = duckdb.connect()
        self.con.execute(
            "CREATE TABLE RESORT_SALES (TXID VARCHAR, RUN_ID VARCHAR, WORKER_ID INTEGER, "
            "SALE_TIME TIMESTAMPTZ, _COMMIT_TIME TIMESTAMPTZ)"
        )
        self.con.executemany(
            "INSERT INTO RESORT_SALES VALUES (?, ?, ?, to_timestamp(?), to_timestamp(?))",
            [(f"{RUN}-{w}-{seq}", RUN, w, T0, T0 + 0.5) for w, seq in landed],
        )

    def wait_landed(self, timeout_s: float) -> None:
        pass

    def query(self, sql: str) -> list[tuple]:
        return self.con.execute(sql).fetchall()


def test_a_killed_two_channel_worker_is_bounded_from_its_lines_and_txids() -> None:
    # Worker 0 finished: 1000 rows, 990 landed. Worker 1 (two channels) was killed:
    # channel 0 landed seqs 0..799 but 700..709, channel 1 landed 0..599.
    ch1 = CHANNEL_SEQ_STRIDE
    landed = [(0, s) for s in range(990)]
    landed += [(1, s) for s in range(800) if not 700 <= s < 710]
    landed += [(1, ch1 + s) for s in range(600)]
    windows = [
        {"end": T0 + 1, "rows": 700, "acked_rows": 600, "in_flight_bytes": 5000, "channels": 2},
        # merged from its channels' windows, the last of which closed 0.3 s late: rows
        # sent before the nominal end are all in it, later ones may not be
        {"window_start": T0 + 1, "window_seconds": 1.0, "end": T0 + 2.3, "rows": 650,
         "acked_rows": 650, "in_flight_bytes": 7000, "channels": 2},
    ]  # fmt: skip
    killed = {"worker_id": 1, "exit_code": -9, "windows": windows, "started_at": T0 - 1,
              "exited_at": T0 + 3}  # fmt: skip
    summary = {"worker_id": 0, "rows_generated": 1000}
    pacing = {"target_bps": 1e6, "batch_bytes": 100_000, "channels": 1}
    got = verify_landed(TableEmu(landed), RUN, [summary], [killed], pacing)
    (k,) = got["killed_workers"]
    assert k["rows_landed"] == 790 + 600
    assert k["missing_below_last_landed"] == 10  # the gap 700..709: lost for certain
    assert k["rows_appended_by_last_line"] == 1350 and k["rows_acked_by_last_line"] == 1250
    assert k["rows_generated_at_least"] == 1400  # seqs 0..799 and 0..599, beyond its lines
    row = min_row_bytes(RUN, 1)
    after = int(1e6 * (3 - 2 + MAX_QUANTUM_S + BURST_S + 1.0) / row) + 2 * 2 * (100_000 // row)
    assert k["rows_appendable_after_last_line"] == after  # two channels, from the lines
    assert k["rows_generated_at_most"] == 1350 + after
    assert (k["lost_at_least"], k["lost_at_most"]) == (10, 1350 + after - 1390)
    assert got["lost"] is None and got["rows_expected"] is None
    assert got["lost_at_least"] == 10 + 10 and got["lost_at_most"] == 10 + k["lost_at_most"]
    assert got["rows_expected_at_least"] == 2400
    assert got["rows_expected_at_most"] == 1000 + 1350 + after
    text = describe(got)
    assert "lost unknown (at least 20, at most" in text and "worker 1 ended without" in text
    # Pacing not known (a --worker-arg changed it): no upper bound, and it says so.
    got = verify_landed(TableEmu(landed), RUN, [summary], [killed], None)
    assert got["lost_at_most"] is None and got["rows_expected_at_most"] is None
    assert got["killed_workers"][0]["lost_at_most"] is None
    assert "no upper bound known" in describe(got) and "no true upper bound" in describe(got)


def test_a_clean_run_counts_exactly() -> None:
    landed = [(0, s) for s in range(500)] + [(0, 7), (1, 0)]
    summaries = [{"worker_id": 0, "rows_generated": 500}, {"worker_id": 1, "rows_generated": 3}]
    got = verify_landed(TableEmu(landed), RUN, summaries, [], None)
    assert (got["rows_expected"], got["rows_landed"], got["duplicates"]) == (503, 502, 1)
    assert got["lost"] == got["lost_at_least"] == got["lost_at_most"] == 2
    assert "502 rows of 503 generated: 1 duplicates, 2 lost" in describe(got)
