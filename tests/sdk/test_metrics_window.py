"""A window's ``sdk`` object from two scrapes of the SDK's /metrics, and its merges.

The fixtures are two real scrapes (1.5 s apart) of SDK 1.9.1's endpoint in a worker of
two channels (two clients, ``fixture-w0-ch0-c1`` and ``-ch1-c1``) sending in file mode to
the emulator, gzipped. The expected figures are read off the text with a regular
expression, not through the parser under test.
"""

from __future__ import annotations

import gzip
import logging
import re
from pathlib import Path

import pytest

from elastic_channels.sdk.metrics import SdkScraper, start_endpoint
from elastic_channels.sdk.metrics_window import merge_sdk, parse, throttle_counts, window_figures
from elastic_channels.worker.sdk_figures import SdkFigures

pytest.importorskip("prometheus_client")

FIXTURES = Path(__file__).parent / "fixtures"


def scrape(n: int) -> str:
    return gzip.decompress((FIXTURES / f"sdk_metrics_{n}.txt.gz").read_bytes()).decode()


def total(text: str, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples in ``text`` whose labels include ``labels``."""
    out = 0.0
    for m in re.finditer(rf"^{name}\{{([^}}]*)\}} (\S+)$", text, re.M):
        have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if all(have.get(k) == v for k, v in labels.items()):
            out += float(m.group(2))
    return out


def test_both_clients_and_every_family_are_read() -> None:
    text = scrape(1)
    samples = parse(text)
    clients = {dict(labels).get("client_name") for _, labels in samples}
    assert clients == {"fixture-w0-ch0-c1", "fixture-w0-ch1-c1"}
    # one sample per sample line of the text
    assert len(samples) == len([ln for ln in text.splitlines() if ln and not ln.startswith("#")])


def test_deltas_of_counters_and_sums_between_two_scrapes() -> None:
    t1, t2 = scrape(1), scrape(2)
    w = window_figures(parse(t1), parse(t2))

    def moved(name: str, **labels: str) -> int:
        return round(total(t2, name, **labels) - total(t1, name, **labels))

    assert w["files"]["durable"] == moved("file_upload_count", stage_type="durable") > 0
    assert w["files"]["transient"] == moved("file_upload_count", stage_type="transient")
    assert w["files"]["compressed_bytes"] == moved("output_file_compressed_bytes_sum") > 0
    assert w["files"]["uncompressed_bytes"] == moved("output_file_uncompressed_bytes_sum")
    assert w["files"]["rows"] == moved("output_file_rows_sum") > 0
    assert w["inline"]["requests"] == moved("output_payload_compressed_bytes_count")
    calls = moved("sf_api_total_count", api_name="insert_files")
    assert w["api"]["insert_files"]["calls"] == calls > 0
    # only the APIs that did something in the window are listed
    assert set(w["api"]) == {"insert_files"}
    # a mean is the deltas' sum over their count, exactly
    n = moved("file_upload_latency_ms_count")
    assert w["ms"]["file_upload"]["n"] == n > 0
    mean = (total(t2, "file_upload_latency_ms_sum") - total(t1, "file_upload_latency_ms_sum")) / n
    assert w["ms"]["file_upload"]["mean"] == pytest.approx(mean, abs=1e-3)
    # the quantiles are the SDK's, the largest of the clients' that took a value
    maxima = re.findall(r'^file_upload_latency_ms\{[^}]*quantile="1"\} (\S+)$', t2, re.M)
    assert w["ms"]["file_upload"]["max"] == max(float(v) for v in maxima)
    # a summary that took no value in the window says so
    assert moved("client_processing_delay_rows_ms_count") == 0
    assert w["ms"]["processing_rows"] is None
    # gauges are the values now, both clients added up
    assert w["in_flight"]["bytes"] == round(total(t2, "inflight_bytes"))
    assert w["throttle"] == dict.fromkeys(w["throttle"], 0)


def test_windows_add_up_to_the_whole() -> None:
    s1, s2 = parse(scrape(1)), parse(scrape(2))
    parts = merge_sdk([window_figures({}, s1), window_figures(s1, s2)])
    whole = window_figures({}, s2)
    assert parts is not None
    for group in ("files", "inline", "throttle"):
        assert parts[group] == whole[group]
    assert parts["api"]["insert_files"]["calls"] == whole["api"]["insert_files"]["calls"]
    assert parts["ms"]["file_upload"]["n"] == whole["ms"]["file_upload"]["n"]
    assert parts["ms"]["file_upload"]["mean"] == pytest.approx(whole["ms"]["file_upload"]["mean"])


def test_a_new_client_counts_from_zero_and_a_restarted_counter_from_its_value() -> None:
    t1, t2 = scrape(1), scrape(2)
    s1 = {
        k: v for k, v in parse(t1).items() if dict(k[1]).get("client_name") != "fixture-w0-ch1-c1"
    }
    w = window_figures(s1, parse(t2))
    ch0 = total(t2, "file_upload_count", client_name="fixture-w0-ch0-c1", stage_type="durable")
    ch0 -= total(t1, "file_upload_count", client_name="fixture-w0-ch0-c1", stage_type="durable")
    ch1 = total(t2, "file_upload_count", client_name="fixture-w0-ch1-c1", stage_type="durable")
    assert w["files"]["durable"] == round(ch0 + ch1)
    # a counter lower than before restarted: it counts from 0
    back = window_figures(parse(t2), parse(t1))
    assert back["files"]["durable"] >= 0
    assert back["files"]["durable"] == round(total(t1, "file_upload_count", stage_type="durable"))


def bump(text: str, name: str, client: str, by: int) -> str:
    pattern = rf'^({name}\{{client_name="{client}"[^}}]*\}}) (\S+)$'
    return re.sub(pattern, lambda m: f"{m.group(1)} {float(m.group(2)) + by:g}", text, flags=re.M)


def test_throttling_is_counted_and_said() -> None:
    t1 = scrape(1)
    t2 = bump(scrape(2), "memory_limit_reached_count", "fixture-w0-ch1-c1", 3)
    t2 = bump(t2, "inflight_byte_limit_reached_count", "fixture-w0-ch0-c1", 1)
    texts = iter([t1, t2])
    figures = SdkFigures(SdkScraper("http://127.0.0.1:9/metrics", fetch=lambda _: next(texts)))
    first: dict = {"type": "window"}
    second: dict = {"type": "window"}
    figures.add_to(first)
    figures.add_to(second)
    assert "sdk_throttled" not in first
    assert second["sdk_throttled"] == {"memory_limit": 3, "inflight_byte_limit": 1}
    assert throttle_counts(second["sdk"]) == second["sdk_throttled"]
    run = figures.summary_fields()
    assert run["sdk_throttled_windows"] == 1
    assert run["sdk"]["throttle"]["memory_limit"] == 3
    assert "in_flight" not in run["sdk"]  # gauges are not summed over windows


def test_a_failed_scrape_leaves_null_once_warned_and_the_next_covers_it(caplog) -> None:
    t1, t2 = scrape(1), scrape(2)
    answers = iter([t1, OSError("connection refused"), "not prometheus {{{", t2])

    def fetch(_: str) -> str:
        a = next(answers)
        if isinstance(a, Exception):
            raise a
        return a

    scraper = SdkScraper("http://127.0.0.1:9/metrics", fetch=fetch)
    with caplog.at_level(logging.WARNING, logger="elastic_channels.sdk"):
        got = [scraper.window() for _ in range(4)]
    assert got[0] is not None and got[1] is None and got[2] is None and got[3] is not None
    assert scraper.failures == 2
    warnings = [r for r in caplog.records if "SDK's metrics" in r.getMessage()]
    assert len(warnings) == 1 and "connection refused" in warnings[0].getMessage()
    assert got[3]["files"] == window_figures(parse(t1), parse(t2))["files"]


def test_merging_workers_sums_counts_weights_means_and_bounds_quantiles() -> None:
    a = {"files": {"durable": 2}, "ms": {"file_upload": {"n": 1, "mean": 10.0, "p50": 10.0,
         "p99": 10.0, "max": 10.0}, "input_buffer": None}}  # fmt: skip
    b = {"files": {"durable": 3}, "ms": {"file_upload": {"n": 3, "mean": 30.0, "p50": 20.0,
         "p99": 50.0, "max": 60.0}, "input_buffer": None}}  # fmt: skip
    m = merge_sdk([a, None, b])
    assert m is not None
    assert m["files"]["durable"] == 5
    assert m["ms"]["file_upload"] == {"n": 4, "mean": 25.0, "p50": 20.0, "p99": 50.0, "max": 60.0}
    assert m["ms"]["input_buffer"] is None
    assert merge_sdk([None, None]) is None


def test_start_endpoint_takes_a_free_port_of_its_own() -> None:
    env = {"SS_METRICS_PORT": "80", "SS_ENABLE_METRICS": "false"}
    url = start_endpoint(env)
    assert env["SS_ENABLE_METRICS"] == "true" and env["SS_METRICS_IP"] == "127.0.0.1"
    assert env["SS_METRICS_PORT"] != "80"  # an inherited port would collide on one host
    assert url == f"http://127.0.0.1:{env['SS_METRICS_PORT']}/metrics"


def test_reading_only_the_used_families_gives_the_same_figures() -> None:
    t1, t2 = scrape(1), scrape(2)
    full = window_figures(parse(t1), parse(t2))
    assert window_figures(parse(t1, only=True), parse(t2, only=True)) == full
    kept = parse(t2, only=True)
    assert len(kept) < 0.6 * len(parse(t2))  # much of the text is what no window reads
    assert not any(dict(labels).get("quantile") in ("0", "0.9") for _, labels in kept)
