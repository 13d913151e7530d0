"""What a worker's output must hold, and what it landed in the emulator's table.

What landed is checked from the table alone, independently of the worker's own
counters: every batch is stamped with one ``SALE_TIME``, so grouping a run's rows by
``SALE_TIME`` recovers the batches (first seq, row count), and regenerating each batch
with the same stamp gives the exact NDJSON the worker must have sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from elastic_channels import rows

try:
    import elastic_native
except ImportError:  # the byte-parity tests make sure both generators agree
    elastic_native = None

#: The issue's minimum summary keys: present even when the worker could not connect.
ISSUE_SUMMARY_KEYS = frozenset(
    {
        "run_id",
        "worker_id",
        "rows_sent",
        "rows_acked",
        "bytes_sent",
        "seconds",
        "mb_per_s",
        "rows_per_s",
        "ack_p50_ms",
        "ack_p99_ms",
        "resent_batches",
        "unacked_rows",
    }
)
#: Keys every summary line carries (the issue's list plus what the tests rely on).
SUMMARY_KEYS = ISSUE_SUMMARY_KEYS | {
    "type",
    "channel_reopens",
    "sdk_retries",
    "own_cpu_s",
    "append_own_cpu_s",
    "first_seq",
    "next_seq",
    "encoder",
    "append_mode",
}
#: Keys every window line carries: start/end, rows, bytes, rates, ack latency
#: p50/p95/p99/max, in flight, retries, errors, CPU and RSS.
WINDOW_KEYS = frozenset(
    {
        "type",
        "run_id",
        "worker_id",
        "start",
        "end",
        "rows",
        "bytes",
        "mb_per_s",
        "rows_per_s",
        "acked_rows",
        "acks",
        "ack_p50_ms",
        "ack_p95_ms",
        "ack_p99_ms",
        "ack_max_ms",
        "in_flight_batches",
        "in_flight_bytes",
        "resent_batches",
        "sdk_retries",
        "errors",
        "cpu_pct",
        "rss_mib",
    }
)

# --- what landed --------------------------------------------------------------------


@dataclass
class LandedBatch:
    sale_time_us: int
    first_seq: int
    last_seq: int
    rows: int  # rows landed with this stamp, duplicates included
    distinct: int


@dataclass
class Landed:
    """One worker's rows in the table, grouped into the batches it sent."""

    batches: list[LandedBatch]
    first_seq: int
    next_seq: int

    @property
    def rows(self) -> int:
        return sum(b.rows for b in self.batches)

    @property
    def duplicates(self) -> int:
        return sum(b.rows - b.distinct for b in self.batches)

    def lost(self) -> list[int]:
        """Seqs in [first_seq, next_seq) that did not land (a few, for the message)."""
        have = sorted((b.first_seq, b.last_seq) for b in self.batches)
        missing, expect = [], self.first_seq
        for lo, hi in have:
            if lo > expect:
                missing.extend(range(expect, lo))
            expect = max(expect, hi + 1)
        missing.extend(range(expect, self.next_seq))
        return missing

    def outside(self) -> list[LandedBatch]:
        return [
            b for b in self.batches if b.first_seq < self.first_seq or b.last_seq >= self.next_seq
        ]


def landed(emu: Any, run_id: str, worker_id: int, summary: Mapping[str, Any]) -> Landed:
    """The run's landed rows grouped by batch stamp (after waiting for landing)."""
    assert emu.wait_landed(60), "the emulator did not finish landing within 60 s"
    prefix = f"{run_id}-{worker_id}-"
    assert "'" not in prefix
    rows = emu.query(
        f"""
        SELECT epoch_us(SALE_TIME) AS t, min(s), max(s), count(*), count(DISTINCT s)
        FROM (
            SELECT SALE_TIME, CAST(substr(TXID, {len(prefix) + 1}) AS BIGINT) AS s
            FROM RESORT_SALES
            WHERE RUN_ID = '{run_id}' AND WORKER_ID = {worker_id}
              AND starts_with(TXID, '{prefix}')
        )
        GROUP BY t ORDER BY 2
        """
    )
    (others,) = emu.query(
        f"SELECT count(*) FROM RESORT_SALES WHERE RUN_ID = '{run_id}' "
        f"AND NOT (WORKER_ID = {worker_id} AND starts_with(TXID, '{prefix}'))"
    )[0]
    assert others == 0, f"{others} rows of run {run_id} carry another worker id or TXID"
    batches = [LandedBatch(*map(int, r)) for r in rows]
    for b in batches:
        # One stamp per batch and batches of consecutive seqs: a stamp's seqs are contiguous.
        assert b.last_seq - b.first_seq + 1 == b.distinct, f"gaps inside one batch: {b}"
    return Landed(batches, int(summary["first_seq"]), int(summary["next_seq"]))


def regenerate(run_id: str, worker_id: int, batch: LandedBatch) -> bytes:
    """The NDJSON of ``batch`` as the worker generated it."""
    n = batch.last_seq - batch.first_seq + 1
    if elastic_native is not None:
        gen = elastic_native.ResortGenerator(run_id, worker_id, start_seq=batch.first_seq)
    else:
        gen = rows.ResortGenerator(run_id, worker_id, start_seq=batch.first_seq)
    return gen.next_batch(n, batch.sale_time_us)


def expected_raw_bytes(run_id: str, worker_id: int, got: Landed) -> tuple[int, int]:
    """(NDJSON bytes generated, appends) for a run where each batch was sent once."""
    return sum(len(regenerate(run_id, worker_id, b)) for b in got.batches), len(got.batches)


def emulator_counters(emu: Any) -> dict[str, int]:
    """The emulator's counters; ``bytes_raw`` is every uncompressed byte the SDK sent,
    inline (rows requests) and in files (file mode's fragments, each appended chunk
    followed by one newline there too), ``file_fragments`` how many went by file."""
    s = emu.stats_snapshot()
    out = {k: s[k] for k in ("appends_acked", "rows_landed", "rows_received", "file_fragments")}
    out["bytes_raw"] = s["bytes_raw"] + s["file_bytes_raw"]
    return out


def counters_since(emu: Any, before: Mapping[str, int]) -> dict[str, int]:
    now = emulator_counters(emu)
    return {k: now[k] - before[k] for k in now}
