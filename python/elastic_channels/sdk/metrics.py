"""The SDK's own figures: its Prometheus endpoint, turned on and scraped once a window.

The SDK (1.9.1) serves Prometheus text on ``http://SS_METRICS_IP:SS_METRICS_PORT/metrics``
when ``SS_ENABLE_METRICS=true``. What was checked on loopback against the emulator:

- The endpoint is bound once per process, by ``bootstrap()`` when
  ``snowflake.ingest.streaming`` is first imported, not per client. Every client of the
  process is served on it, its series labelled ``client_name`` (a ``--channels N`` worker:
  N clients on one endpoint; a reopened channel: a new client name).
- A port already bound makes that import fail ("Failed to initialize metrics ... Address
  already in use") and the failure sticks for the process: a second import with another
  port fails the same way. So each worker process takes a free loopback port of its own
  (the kernel's pick for port 0) and imports the SDK at once (:func:`start_endpoint`).

The figures a window carries are read off two scrapes (:mod:`.metrics_window`).
"""

from __future__ import annotations

import importlib
import logging
import os
import socket
import time
import urllib.request
from collections.abc import Callable, MutableMapping
from typing import Any

from .metrics_window import Samples, parse, window_figures

log = logging.getLogger("elastic_channels.sdk")

__all__ = ["EndpointError", "SdkScraper", "disable_endpoint", "start_endpoint"]

#: A scrape waits this long at most: a window line is never held up for long.
SCRAPE_TIMEOUT_S = 1.0


class EndpointError(RuntimeError):
    """The SDK could not serve its metrics (its import failed on the endpoint)."""


def free_port(ip: str) -> int:
    """A port free on ``ip`` now (the kernel's pick), for the SDK to bind next."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((ip, 0))
        return int(s.getsockname()[1])


def start_endpoint(environ: MutableMapping[str, str] | None = None, ip: str = "127.0.0.1") -> str:
    """Turn on the SDK's endpoint on a free port of ``ip`` and import the SDK at once (the
    import binds it, so the port has no time to be taken); the URL to scrape.

    Any ``SS_METRICS_PORT`` in the environment is replaced: workers on one host inherit
    one environment and would all bind the same port. Raises ``EndpointError`` when the
    SDK refuses (its message names the port); with no SDK installed the environment is
    set and nothing is imported (the worker's own connect says the SDK is missing)."""
    env = os.environ if environ is None else environ
    port = free_port(ip)
    env.update(SS_ENABLE_METRICS="true", SS_METRICS_IP=ip, SS_METRICS_PORT=str(port))
    if environ is None:
        try:
            importlib.import_module("snowflake.ingest.streaming")
        except ImportError:
            pass
        except RuntimeError as e:
            raise EndpointError(
                f"the SDK's metrics endpoint on {ip}:{port} did not start ({e}); "
                "--no-sdk-metrics (SDK_METRICS=off) turns it off"
            ) from None
    return f"http://{ip}:{port}/metrics"


def disable_endpoint(environ: MutableMapping[str, str] | None = None) -> None:
    """Keep the SDK's endpoint off, whatever the environment inherited said."""
    env = os.environ if environ is None else environ
    env["SS_ENABLE_METRICS"] = "false"


def fetch_text(url: str, timeout_s: float = SCRAPE_TIMEOUT_S) -> str:
    with urllib.request.urlopen(url, timeout=timeout_s) as reply:
        return str(reply.read().decode("utf-8"))


class SdkScraper:
    """Scrapes the endpoint once a window; :meth:`window` gives the window's ``sdk``
    object (None, with one warning per run, when a scrape fails: the next good scrape's
    deltas then cover the failed window too, so the counts still add up)."""

    def __init__(
        self,
        url: str,
        fetch: Callable[[str], str] = fetch_text,
    ) -> None:
        self.url = url
        self._fetch = fetch
        self._prev: Samples = {}
        self._warned = False
        #: Scrapes that failed, and the CPU seconds scraping took (for the cost).
        self.failures = 0
        self.cpu_s = 0.0

    def window(self) -> dict[str, Any] | None:
        t0 = time.thread_time()
        try:
            samples = parse(self._fetch(self.url), only=True)
            if not samples:  # another server on the port, or an SDK that renamed them
                raise ValueError("the reply holds none of the SDK's metrics")
            figures = window_figures(self._prev, samples)
        except Exception as e:  # a scrape never breaks the worker
            self.failures += 1
            if not self._warned:
                self._warned = True
                log.warning("reading the SDK's metrics from %s failed: %s", self.url, e)
            return None
        finally:
            self.cpu_s += time.thread_time() - t0
        self._prev = samples
        return figures
