"""The figures of a run a threshold (or a search bound) can name: the one list.

A scenario's ``thresholds`` block names these; ``run`` checks each against the run's
figures and ends ``thresholds_failed`` (exit 99) naming every one that does not hold.
Throughput is the run's, by
:func:`elastic_channels.measures.run_throughput` (acked bytes and rows over the sending
window, fleet-wide, warmup excluded); latencies are percentiles of the merged
histograms; ``peak_rss_mib`` is the worst worker's.
"""

from __future__ import annotations

__all__ = ["FIGURES", "FIGURE_HELP"]

#: Figure name -> what it is, in the unit its name says.
FIGURE_HELP: dict[str, str] = {
    "mb_per_s": "the run's throughput, MB/s of acked NDJSON (fleet-wide, warmup excluded)",
    "rows_per_s": "the run's throughput in acked rows/s (fleet-wide, warmup excluded)",
    "pct_of_target": "mb_per_s as a % of the fleet's target MB/s (the schedule's, for every "
    "worker started, warmup excluded): {min: 95} fails a run 5% or more under its target",
    "ack_p50_ms": "append-to-ack latency, median, ms",
    "ack_p99_ms": "append-to-ack latency, 99th percentile, ms",
    "behind_p99_ms": "how far sending fell behind the pacing schedule, 99th percentile, ms",
    "visible_p99_ms": "ingest-to-visible latency (the row's commit time), 99th percentile, ms",
    "lost": "rows sent and acked that never landed",
    "duplicates": "rows that landed more than once",
    "errors": "errors the workers reported",
    "resent_batches": "batches resent on a new channel",
    "sdk_retries": "requests the SDK retried",
    "cpu_s_per_gb": "client CPU-seconds per GB sent",
    "peak_rss_mib": "the worst worker's peak resident memory, MiB",
}

#: Every figure name, in the order above.
FIGURES: tuple[str, ...] = tuple(FIGURE_HELP)
