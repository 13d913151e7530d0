"""A real worker at 20 MB/s beside a stream of hostile requests and idle connections,
all against one real emulator process over HTTPS (issue #12 item 10): the worker keeps
its rate, loses nothing, and every hostile request gets the answer it deserves.

Bounded: the worker runs 12 s (its child is killed at 60 s), the hostile loop stops
when the worker does, every socket has a timeout, the emulator stops by itself.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading

import pytest
from emulator_support import ROWS_PATH, EmulatorProcess, read_reply, sdk_available, tls_socket
from worker_support import landed, run_worker, worker_args, worker_env

from elastic_channels.rows import ResortGenerator

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")

TARGET_BPS = 20e6
DURATION_S = 12.0
#: 100 MB of zeros in ~100 KB of gzip: made once, sent many times.
BOMB = gzip.compress(b"\0" * (100 << 20))


class _Tuples:
    """The in-process emulator's ``query``/``wait_landed`` over an emulator process."""

    def __init__(self, proc: EmulatorProcess) -> None:
        self.proc = proc

    def wait_landed(self, timeout_s: float) -> bool:
        return self.proc.wait_landed(timeout_s)

    def query(self, sql: str) -> list[tuple]:
        return [tuple(row.values()) for row in self.proc.query(sql)]


class Hostile:
    """Sends one kind of bad request after another until told to stop; tallies replies."""

    def __init__(self, emu: EmulatorProcess) -> None:
        self.emu, self.token = emu, emu.scoped_token()
        self.replies: dict[str, list[int]] = {}
        self.held: list[socket.socket] = []
        self.stop = threading.Event()
        self.errors: list[str] = []

    def _sock(self):
        return tls_socket(self.emu.port, self.emu.info["ssl_cert_file"], timeout=10)

    def _head(self, length: int, token: str, encoding: str = "identity") -> bytes:
        return (
            f"POST {ROWS_PATH.format(rid='hostile')} HTTP/1.1\r\nHost: localhost\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/x-ndjson\r\n"
            f"Content-Encoding: {encoding}\r\nContent-Length: {length}\r\n\r\n"
        ).encode()

    def _raw(self, name: str, data: bytes, keep: bool = False) -> None:
        s = self._sock()
        s.sendall(data)
        if keep:  # never finished: the server must time it out
            self.held.append(s)
            return
        status, _ = read_reply(s)
        s.close()
        self.replies.setdefault(name, []).append(status)

    def idle_tls(self) -> None:
        self.held.append(self._sock())

    def idle_tcp(self) -> None:  # not even a TLS handshake
        self.held.append(socket.create_connection(("127.0.0.1", self.emu.port), timeout=10))

    def slowloris(self) -> None:
        self._raw("slowloris", b"POST /oauth/token HTTP/1.1\r\nHost: x\r\nX-A: ", keep=True)

    def negative_length(self) -> None:
        self._raw("negative_length", self._head(-1, self.token))

    def unauthenticated(self) -> None:
        self._raw("unauthenticated", self._head(8_000_000, "forged"))

    def bomb(self) -> None:
        self._raw("bomb", self._head(len(BOMB), self.token, "gzip") + BOMB)

    def bad_rows(self) -> None:
        row = ResortGenerator("hostile", 0).next_batch(3, 1_700_000_000_000_000)
        body = row + b'{"TXID": "\xff\xfe"}\n{not json\n[1]\n' + row
        self._raw("bad_rows", self._head(len(body), self.token) + body)

    def cut_off(self) -> None:
        body = ResortGenerator("hostile-cut", 0).next_batch(50, 1_700_000_000_000_000)
        s = self._sock()
        s.sendall(self._head(len(body), self.token) + body[:-10])
        s.close()

    def control_without_secret(self) -> None:
        status, _, _ = self.emu.request(
            "POST", "/_emulator/query", b'{"sql": "SELECT 1"}', {"Content-Type": "application/json"}
        )
        self.replies.setdefault("control_without_secret", []).append(status)

    def run(self) -> None:
        kinds = [self.idle_tls, self.slowloris, self.negative_length, self.unauthenticated,
                 self.bomb, self.bad_rows, self.cut_off, self.control_without_secret,
                 self.idle_tcp]  # fmt: skip
        i = 0
        while not self.stop.is_set():
            try:
                kinds[i % len(kinds)]()
            except OSError as e:  # a refused or reset connection is an answer too
                self.errors.append(f"{kinds[i % len(kinds)].__name__}: {e}")
            i += 1
            if len(self.held) > 40:  # keep ~40 hostile connections open at a time
                self.held.pop(0).close()
            self.stop.wait(0.05)
        for s in self.held:
            s.close()


def test_a_worker_keeps_its_rate_and_loses_nothing_beside_hostile_traffic(tmp_path):
    emu = EmulatorProcess(
        tmp_path / "emu",
        "--header-timeout-seconds", "2", "--body-timeout-seconds", "3",
        "--idle-timeout-seconds", "10", "--max-connections", "128",
    ).start()  # fmt: skip
    try:
        hostile = Hostile(emu)
        attacker = threading.Thread(target=hostile.run, daemon=True)
        attacker.start()
        run_id = "beside-hostile"
        args = worker_args(emu.info_file, run_id, target_bps=TARGET_BPS, duration_s=DURATION_S)
        try:
            result = run_worker(args, tmp_path, timeout_s=60, env=worker_env())
        finally:
            hostile.stop.set()
            attacker.join(30)
        s = result.summary
        assert result.returncode == 0, str(result)
        assert s["unacked_rows"] == 0
        assert s["mb_per_s"] >= TARGET_BPS / 1e6 * 0.9, f"the worker fell behind: {s}"
        got = landed(_Tuples(emu), run_id, 0, s)
        assert not got.lost(), f"{len(got.lost())} rows lost"
        assert got.rows == s["rows_sent"] + got.duplicates
        # Every hostile request got the answer it deserves, and none got in.
        r = hostile.replies
        assert set(r["negative_length"]) == {400}, r
        assert set(r["unauthenticated"]) == {401}, r
        assert set(r["bomb"]) == {413}, r
        assert set(r["bad_rows"]) == {200}, r
        assert set(r["control_without_secret"]) == {401}, r
        assert all(len(v) >= 3 for v in r.values()), r
        cut = emu.query("SELECT count(*) AS n FROM RESORT_SALES WHERE RUN_ID = 'hostile-cut'")
        assert cut == [{"n": 0}], "a cut-off body landed"
        stats = json.loads(emu.control("GET", "stats"))
        status = stats["channels"][0]
        assert status["rows_error_count"] == 3 * len(r["bad_rows"])
    finally:
        assert emu.stop() == 0, emu.stderr()
