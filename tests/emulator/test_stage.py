"""The emulator's S3 stage over HTTPS on loopback, driven by boto3 (path style).

boto3 streams a file-like body as ``aws-chunked`` with a CRC32 trailer, as the SDK's Rust
S3 client does; raw requests cover the framing the SDK was seen to send and bad checksums.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import zlib

import botocore.exceptions
import pytest
from stage_support import DATA, error_code, granted, make_stage, make_tls, raw_put, s3_client

from elastic_channels.emulator.stage import FaultDecision, StageError

BIG = bytes(range(251)) * 10_000  # 2.4 MiB: three aws-chunked chunks of botocore's 1 MiB


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    return make_tls(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def stage(tmp_path, tls):
    with make_stage(tmp_path / "stage", tls) as started:
        yield started


def test_streamed_put_is_stored_durably_with_its_exact_bytes(stage, tls, tmp_path):
    c = granted(stage, tls)
    sent = []
    c.s3.meta.events.register(
        "before-send.s3.PutObject", lambda request, **_: sent.append(dict(request.headers))
    )
    reply = c.put("0.ndjson", BIG)
    c.put("abc/1.ndjson", b"nested\n")
    rel = c.prefix.removeprefix("streaming/")  # the location's id and a slash
    headers = {k.lower(): v if isinstance(v, str) else v.decode() for k, v in sent[0].items()}
    assert "aws-chunked" in headers["content-encoding"]
    assert headers["x-amz-trailer"] == "x-amz-checksum-crc32"
    assert headers["x-amz-decoded-content-length"] == str(len(BIG))

    md5 = hashlib.md5(BIG).hexdigest()
    assert reply["ETag"] == f'"{md5}"'
    assert stage.read(rel + "0.ndjson") == BIG
    assert stage.read(c.grant.location + "0.ndjson") == BIG
    assert stage.read(rel + "abc/1.ndjson") == b"nested\n"
    assert stage.etag(rel + "0.ndjson") == md5
    assert (tmp_path / "stage/emulator-stage" / c.key("0.ndjson")).read_bytes() == BIG
    got = c.s3.get_object(Bucket="emulator-stage", Key=c.key("0.ndjson"))
    assert (got["Body"].read(), got["ETag"]) == (BIG, f'"{md5}"')
    assert stage.stats() == {
        "uploads": 2, "bytes": len(BIG) + 7, "refused": 0, "faults": 0, "connections_refused": 0
    }  # fmt: skip
    assert stage.location == "emulator-stage/streaming/"
    assert c.grant.location.startswith(stage.location)
    assert set(c.grant.creds) == {"AWS_KEY_ID", "AWS_SECRET_KEY", "AWS_TOKEN"}


def test_moto_keeps_no_copy_between_requests(stage, tls):
    from moto.s3.models import s3_backends

    c = granted(stage, tls)
    for i in range(3):
        c.put(f"{i}.ndjson")
    c.s3.head_object(Bucket="emulator-stage", Key=c.key("1.ndjson"))
    account = stage._moto.account_id  # the stage's own moto account (private, by design)
    assert not s3_backends[account]["aws"].buckets["emulator-stage"].keys


def test_a_restart_on_the_same_directory_keeps_objects(tmp_path, tls):
    with make_stage(tmp_path / "stage", tls) as first:
        c = granted(first, tls)
        c.put("kept.ndjson")
    half_written = tmp_path / "stage/.incoming/crashed-mid-write"
    half_written.write_bytes(b"partial")
    with make_stage(tmp_path / "stage", tls) as second:
        # the same address, and the credentials handed out before still good
        assert second.url == first_url(c)
        got = c.s3.get_object(Bucket="emulator-stage", Key=c.key("kept.ndjson"))
        assert got["Body"].read() == DATA
        assert second.read(c.grant.location + "kept.ndjson") == DATA
        assert not half_written.exists()


def first_url(c) -> str:
    return c.s3.meta.endpoint_url


@pytest.mark.parametrize(
    ("forged", "code"),
    [({"AWS_KEY_ID": "intruder"}, "InvalidAccessKeyId"), ({"AWS_TOKEN": "stale"}, "InvalidToken")],
)
def test_other_credentials_are_refused_with_403(stage, tls, forged, code):
    c = granted(stage, tls)
    client = s3_client(stage, tls, {**c.grant.creds, **forged})
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        client.put_object(Bucket="emulator-stage", Key=c.key("0.ndjson"), Body=DATA)
    assert error_code(excinfo) == (code, 403)
    assert stage.stats()["refused"] == 1
    with pytest.raises(StageError):
        stage.read(c.grant.location + "0.ndjson")


def test_only_object_operations_under_the_prefix_are_served(stage, tls):
    c = granted(stage, tls)
    client = c.s3
    for key in ("elsewhere/0.ndjson", "streaming/0.ndjson"):
        with pytest.raises(botocore.exceptions.ClientError) as excinfo:
            client.put_object(Bucket="emulator-stage", Key=key, Body=DATA)
        assert error_code(excinfo) == ("AccessDenied", 403)
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        client.list_objects_v2(Bucket="emulator-stage")
    assert error_code(excinfo) == ("NotImplemented", 501)
    client.head_bucket(Bucket="emulator-stage")


@pytest.mark.parametrize(
    "name",
    ["/etc/passwd", "../x", "a/../../x", "a\\b", "a\x00b", "", "a//b",
     "emulator-stage/elsewhere/x", "missing.ndjson"],
)  # fmt: skip
def test_read_refuses_unsafe_outside_or_absent_names(stage, name):
    with pytest.raises(StageError, match=r"stage file path|not in the stage") as excinfo:
        stage.read(name)
    assert isinstance(excinfo.value, ValueError)
    assert repr(name) in str(excinfo.value)


@pytest.mark.parametrize("good", [True, False])
def test_the_crc32_trailer_is_checked(stage, tls, good):
    c = granted(stage, tls)
    data = b'{"row":1}\n' * 1000
    crc = base64.b64encode(zlib.crc32(data if good else b"other").to_bytes(4, "big"))
    # The framing the SDK's Rust client was seen to send: one chunk, no chunk signature.
    body = b"%x\r\n%s\r\n0\r\nx-amz-checksum-crc32:%s\r\n\r\n" % (len(data), data, crc)
    status, reply = raw_put(stage, tls, c.key("raw.ndjson"), body, creds=c.grant.creds, headers={
        "content-encoding": "aws-chunked",
        "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        "x-amz-decoded-content-length": str(len(data)),
        "x-amz-trailer": "x-amz-checksum-crc32",
        "x-amz-sdk-checksum-algorithm": "CRC32",
    })  # fmt: skip
    if good:
        assert status == 200 and stage.read(c.grant.location + "raw.ndjson") == data
    else:
        assert (status, b"<Code>BadDigest</Code>" in reply) == (400, True)
        with pytest.raises(StageError):
            stage.read(c.grant.location + "raw.ndjson")


def test_a_chunked_transfer_put_is_read_to_its_end(stage, tls):
    c = granted(stage, tls)
    parts = [b"first part\n", b"second part\n"]
    status, reply = raw_put(
        stage, tls, c.key("te.ndjson"), iter(parts), {"Transfer-Encoding": "chunked"},
        creds=c.grant.creds, encode_chunked=True,
    )  # fmt: skip
    assert (status, stage.read(c.grant.location + "te.ndjson")) == (200, b"".join(parts)), reply


class Script:
    """A fault hook that returns its decisions in order, then None."""

    def __init__(self, *decisions: FaultDecision) -> None:
        self.decisions = list(decisions)
        self.asked: list[str] = []

    def __call__(self, endpoint: str) -> FaultDecision | None:
        self.asked.append(endpoint)
        return self.decisions.pop(0) if self.decisions else None


@pytest.mark.parametrize(("status", "code"), [(503, "SlowDown"), (500, "InternalError")])
def test_a_status_fault_replies_an_s3_error_and_stores_nothing(tmp_path, tls, status, code):
    script = Script(FaultDecision("status", status=status))
    with make_stage(tmp_path / "stage", tls, faults=script) as stage:
        c = granted(stage, tls)
        with pytest.raises(botocore.exceptions.ClientError) as excinfo:
            c.put("0.ndjson")
        assert error_code(excinfo) == (code, status)
        assert not (tmp_path / "stage/emulator-stage" / c.key("0.ndjson")).exists()
        c.put("0.ndjson")  # the next attempt goes through
        assert stage.read(c.grant.location + "0.ndjson") == DATA
        assert script.asked == ["stage_put", "stage_put"]
        assert stage.stats()["faults"] == 1


def test_a_delay_fault_delays_then_stores(tmp_path, tls):
    script = Script(FaultDecision("delay", delay_s=0.3))
    with make_stage(tmp_path / "stage", tls, faults=script) as stage:
        started = dt.datetime.now()
        c = granted(stage, tls)
        c.put("0.ndjson")
        assert dt.datetime.now() - started >= dt.timedelta(seconds=0.3)
        assert stage.read(c.grant.location + "0.ndjson") == DATA


@pytest.mark.parametrize(("action", "stored"), [("drop", False), ("lose_ack", True)])
def test_connection_faults_close_without_a_reply(tmp_path, tls, action, stored):
    with make_stage(tmp_path / "stage", tls, faults=Script(FaultDecision(action))) as stage:
        c = granted(stage, tls)
        with pytest.raises(botocore.exceptions.ConnectionClosedError):
            c.put("0.ndjson")
        assert (tmp_path / "stage/emulator-stage" / c.key("0.ndjson")).exists() is stored
        assert stage.stats()["uploads"] == int(stored)
        c.s3.head_bucket(Bucket="emulator-stage")  # the server still serves


def test_remove_and_s3_delete_drop_the_durable_copy(stage, tls, tmp_path):
    c = granted(stage, tls)
    c.put("a.ndjson")
    c.put("b.ndjson")
    rel = c.prefix.removeprefix("streaming/")
    assert stage.remove(c.grant.location + "a.ndjson") is True
    assert stage.remove(rel + "a.ndjson") is False
    with pytest.raises(StageError):
        stage.read(rel + "a.ndjson")
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        c.s3.get_object(Bucket="emulator-stage", Key=c.key("a.ndjson"))
    assert error_code(excinfo) == ("NoSuchKey", 404)
    c.s3.delete_object(Bucket="emulator-stage", Key=c.key("b.ndjson"))
    assert not (tmp_path / "stage/emulator-stage" / c.key("b.ndjson")).exists()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"action": "explode"},
        {"action": "status", "status": 200},
        {"action": "delay", "delay_s": -1},
    ],
)
def test_fault_decisions_are_checked(kwargs):
    with pytest.raises(ValueError):
        FaultDecision(**kwargs)
