"""More than one elastic channel in one worker process (``--channels N``).

Each channel is a ``Worker`` of its own (its own SDK client, ledger, acks, pacing at
1/N of the worker's rate, and 1/N of its in-flight bytes), running on its own
thread. Channel ``c`` numbers its rows from ``c * CHANNEL_SEQ_STRIDE``, so every
TXID (``{run_id}-{worker_id}-{seq}``) stays unique and a batch is resent on its own
channel only. The channels' lines are merged into the worker's: one window line per
wall-clock window (counts summed, latency histograms merged) and one summary.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
from typing import Any, TextIO

from ..fleet.report import aggregate_window
from ..measures import MB, cpu_s_per_gb
from ..monitor import histogram
from .config import WorkerConfig
from .meter import ack_fields
from .sdk_figures import SdkFigures
from .start_gate import StartGate
from .worker import Worker, shortfall

#: Channel c's first sequence number is c * CHANNEL_SEQ_STRIDE (2**48 rows apart).
CHANNEL_SEQ_STRIDE = 2**48
#: Summary fields that add up across channels (the rest are the process's, or derived).
SUMMED = (
    "rows_sent", "rows_acked", "bytes_sent", "bytes_acked", "resent_batches", "resent_rows",
    "channel_reopens", "sdk_retries", "errors", "unacked_rows", "gen_cpu_s", "loop_cpu_s",
    "sdk_append_cpu_s", "own_cpu_s", "append_own_cpu_s", "rows_generated", "target_bps",
    "warmup_rows_sent", "warmup_rows_acked", "warmup_bytes_sent", "warmup_bytes_acked",
    "billable_bytes", "warmup_billable_bytes",
)  # fmt: skip
#: The per-stage totals of the summary that add up across channels.
STAGE_SUMMED = ("target_bps", "rows", "bytes", "acked_rows", "acked_bytes")


def channel_config(cfg: WorkerConfig, channel: int) -> WorkerConfig:
    """The config of channel ``channel`` of ``cfg.channels``."""
    n = cfg.channels
    return dataclasses.replace(
        cfg,
        target_bps=cfg.target_bps / n,
        stages=None if cfg.stages is None else tuple(s.scaled(1 / n) for s in cfg.stages),
        max_inflight_bytes=max(cfg.batch_bytes, cfg.max_inflight_bytes // n),
        first_seq=channel * CHANNEL_SEQ_STRIDE,
        channel_index=channel,
    )


class LineMerger:
    """Collects the channels' JSON lines and writes the worker's."""

    def __init__(self, n: int, out: TextIO) -> None:
        self.n = n
        self.out = out
        self._lock = threading.Lock()
        self._windows: dict[float, dict[int, dict[str, Any]]] = {}
        self._done: set[int] = set()
        self.summaries: dict[int, dict[str, Any]] = {}
        #: The process's SDK figures, added to each merged window line (None: off).
        self.sdk_figures: SdkFigures | None = None

    def take(self, channel: int, record: dict[str, Any]) -> None:
        with self._lock:
            if record.get("type") == "window":
                self._windows.setdefault(float(record["window_start"]), {})[channel] = record
            elif record.get("type") == "summary":
                self.summaries[channel] = record
                self._done.add(channel)
            self._emit_ready()

    def _emit_ready(self) -> None:
        for start in sorted(self._windows):
            got = self._windows[start]
            if len(got) + len(self._done - set(got)) < self.n:
                break
            line = merge_windows(list(got.values()), self.n)
            if self.sdk_figures is not None:
                self.sdk_figures.add_to(line)
            self._write(line)
            del self._windows[start]

    def _write(self, record: dict[str, Any]) -> None:
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()


class _ChannelOut:
    """The text stream a channel's ``Worker`` writes its lines to."""

    def __init__(self, merger: LineMerger, channel: int) -> None:
        self._merger = merger
        self._channel = channel

    def write(self, text: str) -> int:
        for line in text.splitlines():
            if line.strip():
                self._merger.take(self._channel, json.loads(line))
        return len(text)

    def flush(self) -> None:
        pass


def merge_windows(records: list[dict[str, Any]], channels: int) -> dict[str, Any]:
    """One worker window line from its channels' lines of the same window."""
    merged = aggregate_window(records)
    for key in ("workers", "worker_ids"):
        merged.pop(key, None)
    first = records[0]
    return {
        "type": "window",
        "host": first.get("host"),  # the process's, as its summary says it
        "run_id": first.get("run_id"),
        "worker_id": first.get("worker_id"),
        **merged,
        "channels": channels,
        # CPU and RSS are the process's, measured alike by every channel.
        "cpu_pct": max(float(r.get("cpu_pct") or 0) for r in records),
        "rss_mib": max(float(r.get("rss_mib") or 0) for r in records),
    }


def merge_summaries(parts: list[dict[str, Any]], cfg: WorkerConfig) -> dict[str, Any]:
    """The worker's summary from its channels' summaries."""
    out = dict(parts[0])
    for key in SUMMED:
        if any(key in p for p in parts):
            out[key] = round(sum(p.get(key) or 0 for p in parts), 3)
    out["seconds"] = max(p["seconds"] for p in parts)
    # acked over the sending window, as a one-channel worker's summary says
    out["mb_per_s"] = round(out["bytes_acked"] / max(out["seconds"], 1e-9) / MB, 3)
    out["rows_per_s"] = round(out["rows_acked"] / max(out["seconds"], 1e-9), 1)
    starts = [p["send_start"] for p in parts if p.get("send_start") is not None]
    ends = [p["send_end"] for p in parts if p.get("send_end") is not None]
    out["send_start"] = min(starts) if starts else None
    out["send_end"] = max(ends) if ends else None
    if any("stages" in p for p in parts):
        out["stages"] = merge_stages([p.get("stages") or [] for p in parts])
    out.update(ack_fields(histogram.merge(p["ack_hist_us"] for p in parts if p.get("ack_hist_us"))))
    for key in ("cpu_s", "peak_rss_mib", "drain_seconds"):  # the process's, or the longest
        out[key] = max(p.get(key) or 0 for p in parts)
    out["cpu_s_per_gb"] = cpu_s_per_gb(out["cpu_s"], out["bytes_sent"])
    out["channels"] = len(parts)
    out["channel_seqs"] = [[p["first_seq"], p["next_seq"]] for p in parts]
    errors = [p["error"] for p in parts if "error" in p]
    if errors:
        out["error"] = "; ".join(errors)
    else:
        out.pop("error", None)
    out.update(shortfall(cfg, out))
    return out


def merge_stages(parts: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The worker's per-stage totals from its channels': each stage's target and
    counts added up."""
    merged: dict[int, dict[str, Any]] = {}
    for stages in parts:
        for st in stages:
            into = merged.setdefault(int(st["stage"]), {**st, **dict.fromkeys(STAGE_SUMMED, 0)})
            for key in STAGE_SUMMED:
                into[key] += st.get(key) or 0
    for st in merged.values():
        st["target_bps"] = round(st["target_bps"], 3)
    return [merged[i] for i in sorted(merged)]


class MultiChannelWorker:
    """``cfg.channels`` channels, each a ``Worker`` on its own thread."""

    def __init__(self, cfg: WorkerConfig, *, out: TextIO = sys.stdout, **kwargs: Any) -> None:
        self.cfg = cfg
        self.merger = LineMerger(cfg.channels, out)
        self.workers = [
            Worker(channel_config(cfg, c), out=_ChannelOut(self.merger, c), **kwargs)  # type: ignore[arg-type]
            for c in range(cfg.channels)
        ]
        gate = StartGate(cfg.channels)  # one start for all, when none is agreed (start_gate.py)
        for w in self.workers:
            w.start_gate = gate

    @property
    def stuck_connect(self) -> bool:
        return any(w.stuck_connect for w in self.workers)

    @property
    def sdk_figures(self) -> SdkFigures | None:
        """The process's SDK figures: one endpoint serves every channel's client, so
        they are read once per merged window, not per channel."""
        return self.merger.sdk_figures

    @sdk_figures.setter
    def sdk_figures(self, figures: SdkFigures | None) -> None:
        self.merger.sdk_figures = figures

    def request_stop(self, signum: int | None = None, frame: object = None) -> None:
        for w in self.workers:
            w.request_stop(signum if w is self.workers[0] else None, frame)

    def run(self) -> dict[str, Any]:
        threads = [
            threading.Thread(target=w.run, name=f"channel-{c}", daemon=True)
            for c, w in enumerate(self.workers)
        ]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():  # joined in slices, so this thread still takes signals
                t.join(0.2)
        parts = [self.merger.summaries[c] for c in sorted(self.merger.summaries)]
        summary = merge_summaries(parts, self.cfg)
        if self.merger.sdk_figures is not None:
            summary.update(self.merger.sdk_figures.summary_fields())
        self.merger._write(summary)
        return summary
