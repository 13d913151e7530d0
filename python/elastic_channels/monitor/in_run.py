"""The monitor inside ``elastic-channels run``: fed the workers' lines as they come.

    mon = RunMonitor(run_id, workers, emulator=emu)      # or profile=..., for an account
    for each worker line (text or dict): mon.feed(line)  # ticks itself, ~once a second
    fleet = mon.finish()                                 # the fleet windows, read back

With ``emulator`` (an :class:`~elastic_channels.emulator.Emulator` running in this
process) rows go to its database through its SQL API at its URL, with its CA and a
key-pair JWT of its user's key (what its info file tells a standalone monitor);
otherwise to the target ``profile``, ``flags`` (the run's account flags: database,
schema, pipe) and ``SNOWFLAKE_*`` describe, the flags first, as the workers resolve them
(see :func:`.target.sink_from`). Either way it is the SQL API over HTTPS, the table is
``ELASTIC_K8S_METRICS`` beside the landing table (``RESORT_SALES``, or ``landing``'s, a
workload's: ingest-to-visible is read off its send-time column), and what ``finish``
returns is what a query of it returns.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..landing_table import LandingTable
from .monitor import Monitor
from .sink import SqlMetricsSink
from .target import emulator_sink, sink_from

__all__ = ["RunMonitor"]

log = logging.getLogger("elastic_channels.monitor")


class RunMonitor:
    def __init__(
        self,
        run_id: str,
        workers: int,
        *,
        emulator: Any = None,
        profile: str | None = None,
        flags: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] = os.environ,
        grace_s: float = 10.0,
        tick_s: float = 1.0,
        visible: bool = True,
        on_fleet: Callable[[dict[str, Any]], None] | None = None,
        landing: LandingTable | None = None,
    ) -> None:
        sink: SqlMetricsSink
        if emulator is not None:
            sink = emulator_sink(emulator.info(), "the embedded emulator")
        else:
            sink = sink_from(profile, flags or {}, environ)
        if landing is not None:  # a workload's table: its send-time and run id columns
            sink.follow(landing)
            if visible and not sink.visible_readable:
                log.warning(
                    "monitor %s: ingest-to-visible is unknown for workload %s: its table "
                    "%s has no TIMESTAMP_TZ send_time column, or no run id or unique id "
                    "column to find the run's rows by",
                    run_id, landing.workload, landing.name,
                )  # fmt: skip
                visible = False
        sink.ensure_table()
        self.monitor = Monitor(
            run_id, sink, grace_s=grace_s, expected_workers=workers, visible=visible,
            on_fleet=on_fleet,
        )  # fmt: skip
        self.monitor.resume()
        self._tick_s = tick_s
        self._next_tick = time.monotonic() + tick_s

    def feed(self, line: str | bytes | dict[str, Any]) -> bool:
        """Take one worker line; writes what is due at most every ``tick_s``."""
        taken = self.monitor.feed(line)
        self.tick()
        return taken

    def tick(self) -> None:
        """Write what is due, if ``tick_s`` passed since the last time (call it also
        while no line comes)."""
        if time.monotonic() >= self._next_tick:
            self.monitor.tick()
            self._next_tick = time.monotonic() + self._tick_s

    def finish(self, visible_wait_s: float = 120.0) -> list[dict[str, Any]]:
        """The run is over (every worker exited): wait for the acknowledged rows to be
        visible, write every window, and return the fleet windows as the table holds
        them (keys as :func:`..fleet.report.aggregate_window`'s, plus ``visible_rows``,
        ``visible_p50_ms``, ``visible_p99_ms``, ``visible_avg_ms``)."""
        self.monitor.flush()
        self.monitor.wait_visible(visible_wait_s)
        self.monitor.flush(final=True)
        for sentence in self.monitor.tally.report():  # what was set aside, if anything
            log.warning("monitor %s: %s", self.monitor.run_id, sentence)
        return self.monitor.fleet_windows()
