"""A window's ``sdk`` object from two scrapes of the SDK's ``/metrics``, and its merges.

What SDK 1.9.1 serves (checked against the emulator; every series labelled
``client_name``, ``db_name``, ``schema_name``, ``pipe_name``, ``channel_name``, most
``telemetry``): counters (``file_upload_count`` by ``stage_type`` durable/transient,
``sf_api_total_count`` and ``sf_api_{retryable,non_retryable,auth}_error_count`` by
``api_name``, the limit-reached and buffer-full counts, ...), gauges (``inflight_bytes``,
``inflight_rows``, ...) and summaries (quantiles 0, 0.5, 0.9, 0.99, 1 plus ``_sum`` and
``_count``: the delays, upload and API latencies, file and payload sizes, compression).

The ``prometheus_client`` parser names a counter's samples with ``_total`` added
(``file_upload_count`` is read as ``file_upload_count_total``), as OpenMetrics does.
Counters and a summary's ``_sum``/``_count`` are cumulative per series, so a window gets
their deltas since the last scrape (a series new since then counts from 0: a reopened
channel's new client; one that went backwards restarted and counts from 0 too). A mean is
exact (the deltas' sum over their count). The quantiles are the SDK's own, over what its
summaries hold at the scrape, not this window alone: a window carries them (the largest
over the process's clients) only when the summary took a value in the window.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["SUMMARY_KEYS", "THROTTLE", "USED", "Samples", "merge_sdk", "parse", "throttle_counts",
           "window_figures"]  # fmt: skip

#: One scrape: (sample name, sorted labels) -> value.
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]

#: The window's ``throttle`` keys: the SDK held back appends or flushes (counters).
THROTTLE = {
    "memory_limit": "memory_limit_reached_count_total",
    "inflight_byte_limit": "inflight_byte_limit_reached_count_total",
    "inflight_row_limit": "inflight_row_limit_reached_count_total",
    "input_buffer_full": "input_buffer_full_count_total",
    "output_buffer_full": "output_buffer_full_count_total",
}
#: The window's ``ms`` keys: where an ack's time goes (summaries, milliseconds).
MS = {
    "input_buffer": "input_buffer_delay_ms",
    "output_buffer": "output_buffer_delay_ms",
    "processing_rows": "client_processing_delay_rows_ms",
    "processing_files": "client_processing_delay_files_ms",
    "file_upload": "file_upload_latency_ms",
}
#: An API's error counters, by the key the window gives them.
API_ERRORS = {
    "retryable": "sf_api_retryable_error_count_total",
    "non_retryable": "sf_api_non_retryable_error_count_total",
    "auth": "sf_api_auth_error_count_total",
}
#: The keys of a summary figure: values taken, mean, the SDK's quantiles.
SUMMARY_KEYS = ("n", "mean", "p50", "p99", "max")
_QUANTILES = (("p50", "0.5"), ("p99", "0.99"), ("max", "1"))


#: The metric families a window reads (what the parser is given: see :func:`parse`).
USED = frozenset(
    [n.removesuffix("_total") for n in (*THROTTLE.values(), *API_ERRORS.values())]
    + [*MS.values(), "sf_api_total_count", "sf_api_success_latency_ms", "file_upload_count",
       "file_upload_error_count", "output_file_compressed_bytes",
       "output_file_uncompressed_bytes", "output_file_rows", "output_payload_compressed_bytes",
       "output_payload_uncompressed_bytes", "output_payload_rows", "file_compression_ratio",
       "inflight_bytes", "inflight_rows"]
)  # fmt: skip


#: The quantile samples a window does not read.
_UNUSED_QUANTILES = ('quantile="0"}', 'quantile="0.9"}')


def _family(name: str) -> str:
    for suffix in ("_total", "_sum", "_count"):
        if name.endswith(suffix) and name[: -len(suffix)] in USED:
            return name[: -len(suffix)]
    return name


def only_used(text: str) -> str:
    """The lines of a ``/metrics`` text of the families in :data:`USED` (their ``#``
    lines and samples), but the quantiles no window reads (0 and 0.9): the parser is
    pure Python, and most of the text is what no window reads."""
    keep = []
    for line in text.splitlines():
        if line.startswith("#"):
            parts = line.split(None, 3)
            name = parts[2] if len(parts) > 2 else ""
        else:
            name = line.split("{", 1)[0].split(" ", 1)[0]
        if name and _family(name) in USED and not any(q in line for q in _UNUSED_QUANTILES):
            keep.append(line)
    return "\n".join(keep) + "\n"


def parse(text: str, only: bool = False) -> Samples:
    """Every sample of a ``/metrics`` text (``only``: of the families a window reads), by
    name and labels (the maintained ``prometheus_client`` parser; a text it cannot read
    raises ``ValueError``)."""
    from prometheus_client.parser import text_string_to_metric_families

    out: Samples = {}
    for family in text_string_to_metric_families(only_used(text) if only else text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = float(s.value)
    return out


class _Scrape:
    """One scrape's samples by name, each with its delta since the previous scrape."""

    def __init__(self, prev: Samples, cur: Samples) -> None:
        self.by_name: dict[str, list[tuple[dict[str, str], float, float]]] = {}
        for key, value in cur.items():
            name, labels = key
            delta = value - prev.get(key, 0.0)
            self.by_name.setdefault(name, []).append(
                (dict(labels), value if delta < 0 else delta, value)
            )

    def delta(self, name: str, **match: str) -> int:
        return round(sum(d for labels, d, _ in self._of(name, match)))

    def current(self, name: str) -> int:
        return round(sum(v for _, _, v in self.by_name.get(name, ())))

    def labels(self, name: str, key: str) -> set[str]:
        return {labels[key] for labels, _, _ in self.by_name.get(name, ()) if key in labels}

    def _of(
        self, name: str, match: dict[str, str]
    ) -> Iterable[tuple[dict[str, str], float, float]]:
        for row in self.by_name.get(name, ()):
            if all(row[0].get(k) == v for k, v in match.items()):
                yield row

    def summary(self, name: str, **match: str) -> dict[str, Any] | None:
        """``{n, mean, p50, p99, max}`` of a summary over the window, or None when it took
        no value in it."""
        counts = [(labels, d) for labels, d, _ in self._of(f"{name}_count", match) if d > 0]
        n = round(sum(d for _, d in counts))
        if n <= 0:
            return None
        out: dict[str, Any] = {"n": n, "mean": round(self.delta_sum(name, match) / n, 3)}
        moved = [labels for labels, _ in counts]
        for key, q in _QUANTILES:
            values = [
                v
                for labels, _, v in self._of(name, {**match, "quantile": q})
                if {k: x for k, x in labels.items() if k != "quantile"} in moved
            ]
            out[key] = round(max(values), 3) if values else None
        return out

    def delta_sum(self, name: str, match: dict[str, str]) -> float:
        return sum(d for _, d, _ in self._of(f"{name}_sum", match))


def window_figures(prev: Samples, cur: Samples) -> dict[str, Any]:
    """The window's ``sdk`` object (keys documented in docs/WORKER.md)."""
    s = _Scrape(prev, cur)
    api: dict[str, Any] = {}
    for name in sorted(s.labels("sf_api_total_count_total", "api_name")):
        entry: dict[str, Any] = {"calls": s.delta("sf_api_total_count_total", api_name=name)}
        entry.update({k: s.delta(m, api_name=name) for k, m in API_ERRORS.items()})
        if any(entry.values()):
            entry["ms"] = s.summary("sf_api_success_latency_ms", api_name=name)
            api[name] = entry
    return {
        "files": {
            "durable": s.delta("file_upload_count_total", stage_type="durable"),
            "transient": s.delta("file_upload_count_total", stage_type="transient"),
            "errors": s.delta("file_upload_error_count_total"),
            "compressed_bytes": s.delta("output_file_compressed_bytes_sum"),
            "uncompressed_bytes": s.delta("output_file_uncompressed_bytes_sum"),
            "rows": s.delta("output_file_rows_sum"),
        },
        "inline": {
            "requests": s.delta("output_payload_compressed_bytes_count"),
            "compressed_bytes": s.delta("output_payload_compressed_bytes_sum"),
            "uncompressed_bytes": s.delta("output_payload_uncompressed_bytes_sum"),
            "rows": s.delta("output_payload_rows_sum"),
        },
        "api": api,
        "throttle": {k: s.delta(m) for k, m in THROTTLE.items()},
        "ms": {k: s.summary(m) for k, m in MS.items()},
        "compression_ratio": s.summary("file_compression_ratio"),
        "in_flight": {"bytes": s.current("inflight_bytes"), "rows": s.current("inflight_rows")},
    }


def throttle_counts(sdk: dict[str, Any] | None) -> dict[str, int]:
    """The throttle counts of a window's ``sdk`` object that are above 0."""
    throttle = (sdk or {}).get("throttle") or {}
    return {k: int(v) for k, v in throttle.items() if v}


def merge_sdk(parts: Iterable[dict[str, Any] | None]) -> dict[str, Any] | None:
    """Several ``sdk`` objects as one (the workers' of a fleet window, or a run's
    windows): counts and gauges added up; a summary's ``n`` added up, its ``mean``
    weighted by ``n`` (exact), its ``p50``/``p99``/``max`` the largest of the parts'. For
    any quantile the merged one is at most the largest part's (each part has that share
    of its values at or below its own), so the largest is an upper bound, exact for
    ``max``. None when no part has figures."""
    got = [p for p in parts if p]
    return _merge(got) if got else None


def _is_summary(value: Any) -> bool:
    return isinstance(value, dict) and "n" in value and "mean" in value


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    keys = list(dict.fromkeys(k for p in parts for k in p))
    for key in keys:
        values = [p[key] for p in parts if p.get(key) is not None]
        if not values:
            out[key] = None
        elif _is_summary(values[0]):
            out[key] = _merge_summaries(values)
        elif isinstance(values[0], dict):
            out[key] = _merge(values)
        else:
            out[key] = sum(values)
    return out


def _merge_summaries(parts: list[dict[str, Any]]) -> dict[str, Any]:
    n = sum(int(p["n"]) for p in parts)
    out: dict[str, Any] = {
        "n": n,
        "mean": round(sum(p["n"] * p["mean"] for p in parts) / n, 3) if n else None,
    }
    for key, _ in _QUANTILES:
        values = [p[key] for p in parts if p.get(key) is not None]
        out[key] = max(values) if values else None
    return out
