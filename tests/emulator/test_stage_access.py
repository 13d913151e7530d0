"""Per-client stage access (issue #30 item 5): each pipe-info location has credentials of its
own that reach it alone; refusals name nothing of the stage; the credentials and key are
checked before any of a body is read; a body has a deadline and the stage a connection
cap; malformed aws-chunked sizes and over-long keys are 4xx.

Everything on loopback, every socket with a timeout, every stage stopped by ``with``.
"""

from __future__ import annotations

import base64
import socket
import ssl
import time
import zlib

import botocore.exceptions
import pytest
from emulator_support import make_emulator
from file_mode_support import FileModeClient
from stage_support import (
    BUCKET,
    DATA,
    error_code,
    granted,
    make_stage,
    make_tls,
    raw_put,
    s3_client,
)

from elastic_channels.emulator.stage import StageError

SIGNED = "AWS4-HMAC-SHA256 Credential={}/20261202/us-west-2/s3/aws4_request, SignedHeaders=host, Signature=00"  # noqa: E501


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    return make_tls(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def stage(tmp_path, tls):
    with make_stage(
        tmp_path / "stage", tls, body_timeout_s=1.0, max_connections=3, header_timeout_s=1.0
    ) as s:
        yield s


def _tls_socket(stage, tls) -> ssl.SSLSocket:
    host, port = stage.url.removeprefix("https://").split(":")
    ctx = ssl.create_default_context(cafile=str(tls["ca"]))
    raw = socket.create_connection((host, int(port)), timeout=5)
    return ctx.wrap_socket(raw, server_hostname=host)


def _head(key: str, length: int, creds: dict[str, str] | None) -> bytes:
    key_id = creds["AWS_KEY_ID"] if creds else "nobody"
    token = f"x-amz-security-token: {creds['AWS_TOKEN']}\r\n" if creds else ""
    return (
        f"PUT /{BUCKET}/{key}?x-id=PutObject HTTP/1.1\r\nHost: localhost\r\n"
        f"Authorization: {SIGNED.format(key_id)}\r\n{token}"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def _status(sock: ssl.SSLSocket) -> int | None:
    """The status of the reply on ``sock``, or None if it closed without one."""
    data = b""
    try:
        while b"\r\n" not in data and (part := sock.recv(4096)):
            data += part
    except (ConnectionError, ssl.SSLError):
        pass
    return int(data.split()[1]) if data.startswith(b"HTTP/") else None


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    started = make_emulator(tmp_path_factory.mktemp("emu"))
    yield started
    started.stop()


def test_one_client_cannot_touch_another_clients_files_through_pipe_info(emu):
    alice = FileModeClient(emu.info(), emu.tokens.issue("EMULATOR_USER", "localhost"))
    mallory = FileModeClient(emu.info(), emu.tokens.issue("EMULATOR_USER", "localhost"))
    assert alice.stage["creds"] != mallory.stage["creds"]
    assert alice.stage["location"] != mallory.stage["location"]
    frag = alice.stage_file("0.ndjson", "stage-access", 50)
    bucket, _, key = frag["file_path"].partition("/")
    for attempt in (
        lambda: mallory.s3.delete_object(Bucket=bucket, Key=key),
        lambda: mallory.s3.put_object(Bucket=bucket, Key=key, Body=b"overwritten"),
        lambda: mallory.s3.get_object(Bucket=bucket, Key=key),
    ):
        with pytest.raises(botocore.exceptions.ClientError) as excinfo:
            attempt()
        assert error_code(excinfo) == ("AccessDenied", 403)
        assert alice.prefix not in excinfo.value.response["Error"]["Message"]
    status, reply = alice.register([frag])  # untouched: it registers and lands
    assert status == 200, reply


def test_a_location_belongs_to_the_user_it_was_granted_to(stage, tls):
    grant = stage.grant("ALICE")
    path = grant.location + "0.ndjson"
    stage.check_owner(path, "ALICE")
    stage.check_owner(path.partition("/streaming/")[2], "ALICE")  # the relative spelling
    for who, other in (("BOB", path), ("ALICE", "0.ndjson"), ("ALICE", "f" * 48 + "/0.ndjson")):
        with pytest.raises(StageError, match="not in a stage location issued to this client"):
            stage.check_owner(other, who)


def test_a_client_cannot_register_another_users_file(emu):
    alice = FileModeClient(emu.info(), emu.tokens.issue("EMULATOR_USER", "localhost"))
    bob = FileModeClient(emu.info(), emu.tokens.issue("OTHER_USER", "localhost"))
    frag = alice.stage_file("0.ndjson", "stage-owner", 20)
    status, reply = bob.register([frag])
    assert 400 <= status < 500, reply
    assert alice.register([frag])[0] == 200  # its owner still can


def test_refusals_name_nothing_of_the_stage(stage, tls):
    c = granted(stage, tls)
    other = granted(stage, tls)
    attempts = {
        "NoSuchBucket": lambda: c.s3.put_object(Bucket="another-bucket", Key="k", Body=b"x"),
        "AccessDenied": lambda: c.s3.put_object(Bucket=BUCKET, Key="elsewhere/k", Body=b"x"),
        "InvalidAccessKeyId": lambda: s3_client(
            stage, tls, {**c.grant.creds, "AWS_KEY_ID": "k"}
        ).get_object(Bucket=BUCKET, Key=c.key("k")),
    }
    attempts["AccessDenied "] = lambda: c.s3.get_object(Bucket=BUCKET, Key=other.key("k"))
    for code, attempt in attempts.items():
        with pytest.raises(botocore.exceptions.ClientError) as excinfo:
            attempt()
        assert excinfo.value.response["Error"]["Code"] == code.strip()
        message = excinfo.value.response["Error"]["Message"]
        for secret in (BUCKET, "streaming/", other.prefix, c.prefix):
            assert secret not in message, (code, message)


def test_credentials_are_checked_before_the_body_is_read(stage, tls):
    sock = _tls_socket(stage, tls)
    try:
        sock.sendall(_head("streaming/x/0.ndjson", 200_000_000, None))  # no body follows
        assert _status(sock) == 403  # answered at once, not after 200 MB
    finally:
        sock.close()


def test_a_trickled_body_is_cut_off_at_its_deadline(stage, tls):
    grant = stage.grant("TEST_USER")
    sock = _tls_socket(stage, tls)
    closed = False
    try:
        key = grant.location.partition("/")[2] + "slow.ndjson"
        sock.sendall(_head(key, 1000, grant.creds) + b"x" * 10)
        for _ in range(100):  # one byte every 0.1 s, for at most 10 s (the deadline is 1 s)
            try:
                sock.sendall(b"x")
            except OSError:  # reset, broken pipe, TLS EOF: cut off
                closed = True
                break
            time.sleep(0.1)
    finally:
        sock.close()
    assert closed, "a body trickled in was still being read after 10 s"
    with pytest.raises(StageError):
        stage.read(grant.location + "slow.ndjson")


@pytest.mark.parametrize("sent", [b"", b"PUT /emulator-stage/k HTTP/1.1\r\nHost: x\r\nX-A: "])
def test_headers_not_in_by_their_deadline_are_cut_off(stage, tls, sent):
    sock = _tls_socket(stage, tls)
    sock.settimeout(10)
    try:
        sock.sendall(sent)
        try:
            got = sock.recv(100)  # nothing more is sent: the stage must end it
        except TimeoutError:
            pytest.fail("a connection with no complete header was still open after 10 s")
        except OSError:  # reset, TLS EOF: cut off
            got = b""
    finally:
        sock.close()
    assert got == b"", got


def test_connections_past_the_cap_are_closed_unserved(stage, tls):
    held = [_tls_socket(stage, tls) for _ in range(3)]
    try:
        with pytest.raises((ConnectionError, ssl.SSLError, OSError)):
            extra = _tls_socket(stage, tls)
            extra.sendall(b"HEAD / HTTP/1.1\r\n\r\n")
            assert extra.recv(1) == b"", "a fourth connection was served"
            raise ConnectionError("closed unserved")
    finally:
        for s in held:
            s.close()
    c = granted(stage, tls)
    for _ in range(50):  # the held connections' threads end: a slot is free again
        try:
            c.put("after-cap.ndjson")
            break
        except botocore.exceptions.BotoCoreError:
            time.sleep(0.1)
    assert stage.read(c.grant.location + "after-cap.ndjson") == DATA
    assert stage.stats()["connections_refused"] >= 1


def test_bodies_held_at_once_are_bounded_and_one_over_is_503(tmp_path, tls):
    with make_stage(tmp_path / "stage", tls, body_budget_bytes=100_000) as stage:
        grant = stage.grant("TEST_USER")
        key = grant.location.partition("/")[2]
        holder = _tls_socket(stage, tls)
        try:  # 80 kB announced, 10 bytes sent: its reservation is held while it is read
            holder.sendall(_head(key + "held.ndjson", 80_000, grant.creds) + b"x" * 10)
            for _ in range(50):  # until the stage has taken the holder's headers
                status, reply = raw_put(stage, tls, key + "next.ndjson", DATA, {}, grant.creds)
                if status == 503:
                    break
                time.sleep(0.05)
            assert (status, b"<Code>SlowDown</Code>" in reply) == (503, True), (status, reply)
        finally:
            holder.close()
        for _ in range(100):  # the holder's connection ends: its bytes are free again
            status, reply = raw_put(stage, tls, key + "next.ndjson", DATA, {}, grant.creds)
            if status != 503:
                break
            time.sleep(0.05)
        assert status == 200, reply
        assert stage.read(grant.location + "next.ndjson") == DATA


def _chunked(size_text: bytes, data: bytes) -> tuple[bytes, dict[str, str]]:
    crc = base64.b64encode(zlib.crc32(data).to_bytes(4, "big"))
    body = b"%s\r\n%s\r\n0\r\nx-amz-checksum-crc32:%s\r\n\r\n" % (size_text, data, crc)
    headers = {
        "content-encoding": "aws-chunked",
        "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        "x-amz-decoded-content-length": str(len(data)),
        "x-amz-trailer": "x-amz-checksum-crc32",
    }
    return body, headers


@pytest.mark.parametrize("size", [b"+fa0", b"f_a0", b" fa0", b"fa0 ", b"0x0fa0", b""])
def test_malformed_chunk_sizes_are_400(stage, tls, size):
    grant = stage.grant("TEST_USER")
    key = grant.location.partition("/")[2] + "framed.ndjson"
    data = DATA[:0xFA0]
    body, headers = _chunked(size, data)
    status, reply = raw_put(stage, tls, key, body, headers, creds=grant.creds)
    assert (status, b"<Code>IncompleteBody</Code>" in reply) == (400, True), reply
    good, headers = _chunked(b"fa0", data)
    status, _ = raw_put(stage, tls, key, good, headers, creds=grant.creds)
    assert status == 200 and stage.read(grant.location + "framed.ndjson") == data


@pytest.mark.parametrize("name", ["s" * 300 + "/0.ndjson", "a/" * 600 + "0.ndjson"])
def test_over_long_keys_are_400(stage, tls, name):
    grant = stage.grant("TEST_USER")
    key = grant.location.partition("/")[2] + name
    status, reply = raw_put(stage, tls, key, b"data", {}, creds=grant.creds)
    assert (status, b"<Code>InvalidArgument</Code>" in reply) == (400, True), reply
    assert stage.stats()["uploads"] == 0
