"""The per-channel throughput limit (``--channel-limit-mbps``): a token bucket of
uncompressed bytes per channel; a request over it is answered 429 whole, before anything
of it is taken, and lands exactly once when sent again.

The bucket's arithmetic is checked on a fake clock; the HTTPS surface by hand (rows and
file-mode registrations, on the emulator's bucket with its clock replaced); the SDK's
answer to the 429s by running a worker past the limit."""

from __future__ import annotations

import argparse
import http.client
import json
import random
import ssl

import pytest
import zstandard
from emulator_support import EmulatorProcess, make_emulator, sdk_available
from file_mode_support import FileModeClient
from worker_support import run_worker, worker_args

from elastic_channels.emulator.api.channel_limit import THROTTLED_CODE, ChannelLimit
from elastic_channels.emulator.cli_serve import add_serve
from elastic_channels.emulator.emulator import EmulatorConfig
from elastic_channels.emulator.http.auth import ScopedTokens
from elastic_channels.emulator.http.errors import ApiError
from elastic_channels.rows import ResortGenerator

ROWS_PATH = (
    "/v2/streaming/data/databases/EMULATOR_DB/schemas/PUBLIC/pipes/RESORT_SALES_PIPE"
    "/channels/ELASTIC/rows?requestId={rid}&retryCount=0"
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# --- the bucket --------------------------------------------------------------------------


def test_a_burst_is_admitted_then_the_rest_waits_for_the_refill():
    clock = FakeClock()
    limit = ChannelLimit(1000, burst_s=1.0, clock=clock)
    limit.take("c", 600)
    limit.take("c", 400)  # the burst: 1 s worth
    with pytest.raises(ApiError) as refused:
        limit.take("c", 100)
    assert refused.value.status == 429 and refused.value.code == THROTTLED_CODE
    assert "over its throughput limit of 0.001 MB/s" in refused.value.message
    assert "nothing of it was accepted" in refused.value.message
    clock.now += 0.1  # 100 bytes' worth
    limit.take("c", 100)
    snap = limit.snapshot()
    assert (snap["admitted_requests"], snap["admitted_bytes"]) == (3, 1100)
    assert (snap["refused_requests"], snap["refused_bytes"]) == (1, 100)


def test_a_request_bigger_than_the_burst_passes_on_a_full_bucket_then_is_paid_back():
    clock = FakeClock()
    limit = ChannelLimit(1000, burst_s=1.0, clock=clock)
    limit.take("c", 5000)  # 5 s worth: admitted, the bucket 4000 in debt
    clock.now += 4.5
    with pytest.raises(ApiError, match=r"in 0\.50 s"):
        limit.take("c", 1000)
    clock.now += 0.5
    limit.take("c", 1000)
    with pytest.raises(ApiError):
        limit.take("c", 5000)  # never admitted below a full bucket...
    clock.now += 1.0
    limit.take("c", 5000)  # ...and always once it is full: none refused for ever


def test_the_long_run_rate_is_the_limit_whatever_the_sizes():
    """A client with more to send than the limit, retrying a refused request every 50 ms
    as the SDK does (after its backoff), sends at the limit: no more, and little less."""
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    clock = FakeClock()
    rate = 4e6
    limit = ChannelLimit(rate, burst_s=1.0, clock=clock)
    admitted = 0
    size = rng.randrange(1, int(3 * rate))  # up to 3 s worth (a file-mode fragment)
    for _ in range(50_000):
        try:
            limit.take("c", size)
            admitted += size
            size = rng.randrange(1, int(3 * rate))
        except ApiError:
            clock.now += 0.05
    seconds = clock.now - 1000.0
    assert seconds > 100, f"seed {seed}"
    assert admitted <= rate * seconds + limit.capacity + 3 * rate, f"seed {seed}"
    assert admitted >= 0.95 * rate * seconds - limit.capacity, f"seed {seed}"


def test_channels_have_buckets_of_their_own_and_full_ones_are_forgotten():
    clock = FakeClock()
    limit = ChannelLimit(1000, burst_s=1.0, clock=clock)
    limit.take("a", 1000)
    limit.take("b", 1000)  # a's empty bucket is not b's
    with pytest.raises(ApiError):
        limit.take("a", 1)
    for i in range(300):  # many channels come and go
        limit.take(f"x{i}", 1000)
        clock.now += 0.01
    assert limit.snapshot()["channels"] < 300  # those back to full were forgotten
    with pytest.raises(ApiError):
        limit.take(f"x{299}", 1000)  # a recent one still remembers its debt


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_a_limit_that_is_not_a_positive_rate_is_refused(tmp_path, bad):
    with pytest.raises(ValueError, match="channel limit must be"):
        EmulatorConfig(data_dir=tmp_path, channel_limit_bps=bad)
    with pytest.raises(ValueError, match="burst must be"):
        EmulatorConfig(data_dir=tmp_path, channel_limit_bps=1e6, channel_limit_burst_s=bad)


def _serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="emulator")
    add_serve(parser.add_subparsers(dest="command"))
    return parser


def test_serve_takes_the_limit_in_mb_per_s_and_refuses_what_is_not_one(capsys):
    args = _serve_parser().parse_args(["serve", "--data-dir", "d", "--channel-limit-mbps", "4"])
    assert args.channel_limit_mbps == 4.0
    assert _serve_parser().parse_args(["serve", "--data-dir", "d"]).channel_limit_mbps is None
    assert args.channel_limit_burst_seconds == 1.0
    args = _serve_parser().parse_args(
        ["serve", "--data-dir", "d", "--channel-limit-burst-seconds", "0.25"]
    )
    assert args.channel_limit_burst_seconds == 0.25
    for flag, bad in [
        *(("--channel-limit-mbps", x) for x in ("0", "-2", "nan", "inf", "fast")),
        *(("--channel-limit-burst-seconds", x) for x in ("0", "-1", "nan", "61")),
    ]:
        with pytest.raises(SystemExit):
            _serve_parser().parse_args(["serve", "--data-dir", "d", flag, bad])
        assert flag in capsys.readouterr().err


def test_every_scoped_token_is_distinct():
    tokens = ScopedTokens(3600)
    issued = {tokens.issue("EMULATOR_USER", "localhost") for _ in range(20)}  # same second
    assert len(issued) == 20
    assert all(tokens.verify(t) == "EMULATOR_USER" for t in issued)


# --- over HTTPS ----------------------------------------------------------------------------

LIMIT_BPS = 20_000  # 20 kB/s: a few dozen resort rows a second


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    emulator = make_emulator(tmp_path_factory.mktemp("limit"), channel_limit_bps=LIMIT_BPS)
    try:
        yield emulator
    finally:
        emulator.stop()


@pytest.fixture
def clock(emu):
    """The emulator's buckets on a fake clock, every bucket back to full."""
    fake = FakeClock()
    fake.now = emu.channel_limit.clock() + 3600  # after every bucket's last refill
    emu.channel_limit.clock = fake
    return fake


def _post_rows(emu, token: str, raw: bytes, rid: str) -> tuple[int, dict]:
    ctx = ssl.create_default_context(cafile=emu.info()["ssl_cert_file"])
    conn = http.client.HTTPSConnection("localhost", emu.port, context=ctx, timeout=30)
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/x-ndjson",
        "Content-Encoding": "zstd",
        "X-Snowflake-Uncompressed-Content-Length": str(len(raw)),
    }
    try:
        conn.request("POST", ROWS_PATH.format(rid=rid), zstandard.compress(raw), headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def _landed(emu, run_id: str) -> tuple[int, int]:
    assert emu.wait_landed(30), "landing did not finish in 30 s"
    ((n, distinct),) = emu.query(
        f"SELECT count(*), count(DISTINCT TXID) FROM RESORT_SALES WHERE RUN_ID = '{run_id}'"
    )
    return n, distinct


def test_rows_over_the_limit_get_a_429_and_land_once_when_sent_again(emu, clock):
    token = emu.tokens.issue("EMULATOR_USER", "localhost")
    gen = ResortGenerator("limit-rows", 0)
    first, second = gen.next_batch(50, 10**15), gen.next_batch(50, 10**15)
    assert LIMIT_BPS / 2 < len(first) < LIMIT_BPS  # one fits the burst, two do not
    acked = emu.stats_snapshot()["appends_acked"]
    assert _post_rows(emu, token, first, "r1")[0] == 200
    status, body = _post_rows(emu, token, second, "r2")
    assert status == 429, body
    assert body["code"] == THROTTLED_CODE and body["request_id"] == "r2"
    assert "channel ELASTIC is over its throughput limit of 0.02 MB/s" in body["message"]
    assert emu.stats_snapshot()["appends_acked"] == acked + 1  # the refused one not taken
    clock.now += 1.0
    status, body = _post_rows(emu, token, second, "r2")  # the SDK's retry
    assert status == 200 and body["next_continuation_token"], body
    assert _landed(emu, "limit-rows") == (100, 100)
    snap = emu.stats_snapshot()
    assert snap["responses"]["rows:429"] >= 1
    assert snap["channel_limit"]["refused_requests"] >= 1


def test_each_client_has_its_own_elastic_channel(emu, clock):
    a, b = (emu.tokens.issue("EMULATOR_USER", "localhost") for _ in range(2))
    rows = ResortGenerator("limit-two", 0).next_batch(60, 10**15)
    assert _post_rows(emu, a, rows, "a1")[0] == 200
    assert _post_rows(emu, a, rows, "a2")[0] == 429
    assert _post_rows(emu, b, rows, "b1")[0] == 200  # another client, another channel


def test_a_file_registration_over_the_limit_is_refused_whole_then_lands_once(emu, clock):
    client = FileModeClient(emu.info(), emu.tokens.issue("EMULATOR_USER", "localhost"))
    big = client.stage_file("big.ndjson", "limit-files", 120)  # > the 20 kB bucket
    small = client.stage_file("small.ndjson", "limit-files2", 10)
    fragments = emu.stats_snapshot()["file_fragments"]
    assert client.register([big])[0] == 200  # bigger than the bucket, which was full
    status, body = client.register([small], request_id="f2")
    assert status == 429 and body["code"] == THROTTLED_CODE, body
    assert emu.stats_snapshot()["file_fragments"] == fragments + 1
    clock.now += 10.0
    status, body = client.register([small], request_id="f2")  # its staged file was kept
    assert status == 200, body
    assert _landed(emu, "limit-files") == (120, 120)
    assert _landed(emu, "limit-files2") == (10, 10)


def test_a_retry_of_fragments_already_taken_costs_nothing(emu, clock):
    client = FileModeClient(emu.info(), emu.tokens.issue("EMULATOR_USER", "localhost"))
    frag = client.stage_file("again.ndjson", "limit-again", 60)
    assert client.register([frag])[0] == 200  # the bucket is now nearly empty
    charged = emu.stats_snapshot()["channel_limit"]["admitted_bytes"]
    assert client.register([frag])[0] == 200  # acked again, not charged, not landed again
    assert emu.stats_snapshot()["channel_limit"]["admitted_bytes"] == charged
    assert _landed(emu, "limit-again") == (60, 60)


# --- the real SDK past the limit -------------------------------------------------------------


@pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")
def test_a_worker_past_the_limit_is_slowed_by_sdk_retries_and_loses_nothing(tmp_path):
    """``serve --channel-limit-mbps 2`` in a child process (one DuckDB per process), a
    worker asked for 4 MB/s: the SDK retries every 429, nothing is lost or doubled."""
    server = EmulatorProcess(tmp_path / "emu", "--channel-limit-mbps", "2").start()
    try:
        args = worker_args(
            server.info_file, "limit-sdk", target_bps=4e6, duration_s=3, retry_backoff_s=60
        )
        result = run_worker(args, tmp_path, timeout_s=90)
        assert result.returncode == 0, str(result)
        s = result.summary
        assert s["unacked_rows"] == 0 and s["errors"] == 0 and s["channel_reopens"] == 0
        assert s["rows_acked"] == s["rows_sent"] > 0
        assert s["sdk_retries"] > 0  # the 429s were retried by the SDK, and counted
        stats = json.loads(server.control("GET", "stats"))
        refused = sum(n for k, n in stats["responses"].items() if k.endswith(":429"))
        assert refused == stats["channel_limit"]["refused_requests"] > 0
        assert stats["channel_limit"]["mb_per_s"] == 2.0
        assert server.wait_landed(60)
        (row,) = server.query(
            "SELECT count(*) AS n, count(DISTINCT TXID) AS d FROM RESORT_SALES "
            "WHERE RUN_ID = 'limit-sdk'"
        )
        assert row == {"n": s["rows_sent"], "d": s["rows_sent"]}
    finally:
        server.stop()
