"""The emulator's S3 stage over HTTPS on loopback, driven by boto3 (path style).

boto3 streams a file-like body as ``aws-chunked`` with a CRC32 trailer, as the SDK's Rust
S3 client does; raw requests cover the framing the SDK was seen to send and bad checksums.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import http.client
import io
import ipaddress
import ssl
import zlib
from pathlib import Path

import boto3
import botocore.exceptions
import pytest
from botocore.config import Config
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from elastic_channels.emulator.stage import FaultDecision, Stage, StageError

DATA = bytes(range(256)) * 256  # 64 KiB
BIG = bytes(range(251)) * 10_000  # 2.4 MiB: three aws-chunked chunks of botocore's 1 MiB


def _cert(subject, issuer_key, public_key, issuer_name, ca: bool, extra=()):
    now = dt.datetime.now(dt.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(issuer_name or x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )
    for ext in extra:
        builder = builder.add_extension(ext, critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


@pytest.fixture(scope="module")
def tls(tmp_path_factory) -> dict[str, Path]:
    """A throwaway CA and a leaf for 127.0.0.1/localhost: chain, key and CA files."""
    out = tmp_path_factory.mktemp("tls")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _cert("stage test CA", ca_key, ca_key.public_key(), None, True, [
        x509.KeyUsage(False, False, False, False, False, True, True, False, False),
    ])  # fmt: skip
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = _cert("localhost", ca_key, leaf_key.public_key(), ca.subject, False, [
        x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
        x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        ),
        x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
    ])  # fmt: skip
    pem = serialization.Encoding.PEM
    (out / "chain.pem").write_bytes(leaf.public_bytes(pem) + ca.public_bytes(pem))
    (out / "ca.pem").write_bytes(ca.public_bytes(pem))
    (out / "key.pem").write_bytes(
        leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return {"chain": out / "chain.pem", "key": out / "key.pem", "ca": out / "ca.pem"}


def make_stage(directory: Path, tls: dict[str, Path], **kwargs) -> Stage:
    return Stage(directory, cert_chain=tls["chain"], key_file=tls["key"], **kwargs)


@pytest.fixture
def stage(tmp_path, tls):
    with make_stage(tmp_path / "stage", tls) as started:
        yield started


def s3(stage: Stage, tls, *, key_id: str = "emulator", token: str = "emulator"):
    """A boto3 S3 client for ``stage``: path style, no retries, the test CA."""
    config = Config(
        s3={"addressing_style": "path"},
        retries={"total_max_attempts": 1, "mode": "standard"},
        request_checksum_calculation="when_supported",
        connect_timeout=5,
        read_timeout=10,
    )
    return boto3.session.Session().client(
        "s3",
        endpoint_url=stage.url,
        region_name="us-west-2",
        aws_access_key_id=key_id,
        aws_secret_access_key="emulator",
        aws_session_token=token,
        verify=str(tls["ca"]),
        config=config,
    )


def put(client, key: str, data: bytes = DATA) -> dict:
    """PutObject with a file-like body (so botocore streams it aws-chunked)."""
    return client.put_object(Bucket="emulator-stage", Key=key, Body=io.BytesIO(data))


def error_code(excinfo) -> tuple[str, int]:
    err = excinfo.value.response
    return err["Error"]["Code"], err["ResponseMetadata"]["HTTPStatusCode"]


def test_streamed_put_is_stored_durably_with_its_exact_bytes(stage, tls, tmp_path):
    client = s3(stage, tls)
    sent = []
    client.meta.events.register(
        "before-send.s3.PutObject", lambda request, **_: sent.append(dict(request.headers))
    )
    reply = put(client, "streaming/0.ndjson", BIG)
    put(client, "streaming/abc/1.ndjson", b"nested\n")
    headers = {k.lower(): v if isinstance(v, str) else v.decode() for k, v in sent[0].items()}
    assert "aws-chunked" in headers["content-encoding"]
    assert headers["x-amz-trailer"] == "x-amz-checksum-crc32"
    assert headers["x-amz-decoded-content-length"] == str(len(BIG))

    md5 = hashlib.md5(BIG).hexdigest()
    assert reply["ETag"] == f'"{md5}"'
    assert stage.read("0.ndjson") == BIG
    assert stage.read("emulator-stage/streaming/0.ndjson") == BIG
    assert stage.read("abc/1.ndjson") == b"nested\n"
    assert stage.etag("0.ndjson") == md5
    assert (tmp_path / "stage/emulator-stage/streaming/0.ndjson").read_bytes() == BIG
    got = client.get_object(Bucket="emulator-stage", Key="streaming/0.ndjson")
    assert (got["Body"].read(), got["ETag"]) == (BIG, f'"{md5}"')
    assert stage.stats() == {"uploads": 2, "bytes": len(BIG) + 7, "refused": 0, "faults": 0}
    assert stage.location == "emulator-stage/streaming/"
    assert set(stage.creds()) == {"AWS_KEY_ID", "AWS_SECRET_KEY", "AWS_TOKEN"}


def test_moto_keeps_no_copy_between_requests(stage, tls):
    from moto.s3.models import s3_backends

    client = s3(stage, tls)
    for i in range(3):
        put(client, f"streaming/{i}.ndjson")
    client.head_object(Bucket="emulator-stage", Key="streaming/1.ndjson")
    account = stage._moto.account_id  # the stage's own moto account (private, by design)
    assert not s3_backends[account]["aws"].buckets["emulator-stage"].keys


def test_a_restart_on_the_same_directory_keeps_objects(tmp_path, tls):
    with make_stage(tmp_path / "stage", tls) as first:
        put(s3(first, tls), "streaming/kept.ndjson")
    half_written = tmp_path / "stage/.incoming/crashed-mid-write"
    half_written.write_bytes(b"partial")
    with make_stage(tmp_path / "stage", tls) as second:
        got = s3(second, tls).get_object(Bucket="emulator-stage", Key="streaming/kept.ndjson")
        assert got["Body"].read() == DATA
        assert second.read("kept.ndjson") == DATA
        assert not half_written.exists()


@pytest.mark.parametrize(
    ("key_id", "token", "code"),
    [("intruder", "emulator", "InvalidAccessKeyId"), ("emulator", "stale", "InvalidToken")],
)
def test_other_credentials_are_refused_with_403(stage, tls, key_id, token, code):
    client = s3(stage, tls, key_id=key_id, token=token)
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        put(client, "streaming/0.ndjson")
    assert error_code(excinfo) == (code, 403)
    assert stage.stats()["refused"] == 1
    with pytest.raises(StageError):
        stage.read("0.ndjson")


def test_only_object_operations_under_the_prefix_are_served(stage, tls):
    client = s3(stage, tls)
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        put(client, "elsewhere/0.ndjson")
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


def raw_put(stage: Stage, tls, key: str, body, headers: dict[str, str], **request_kwargs):
    """One PUT over TLS with hand-made headers: (status, reply body)."""
    host, port = stage.url.removeprefix("https://").split(":")
    context = ssl.create_default_context(cafile=str(tls["ca"]))
    conn = http.client.HTTPSConnection(host, int(port), context=context, timeout=10)
    try:
        conn.request("PUT", f"/emulator-stage/{key}?x-id=PutObject", body=body, headers={
            "Authorization": "AWS4-HMAC-SHA256 Credential=emulator/20261202/us-west-2/s3/"
            "aws4_request, SignedHeaders=host, Signature=00",
            "x-amz-date": "20261202T000000Z", **headers,
        }, **request_kwargs)  # fmt: skip
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


@pytest.mark.parametrize("good", [True, False])
def test_the_crc32_trailer_is_checked(stage, tls, good):
    data = b'{"row":1}\n' * 1000
    crc = base64.b64encode(zlib.crc32(data if good else b"other").to_bytes(4, "big"))
    # The framing the SDK's Rust client was seen to send: one chunk, no chunk signature.
    body = b"%x\r\n%s\r\n0\r\nx-amz-checksum-crc32:%s\r\n\r\n" % (len(data), data, crc)
    status, reply = raw_put(stage, tls, "streaming/raw.ndjson", body, {
        "content-encoding": "aws-chunked",
        "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        "x-amz-decoded-content-length": str(len(data)),
        "x-amz-trailer": "x-amz-checksum-crc32",
        "x-amz-sdk-checksum-algorithm": "CRC32",
    })  # fmt: skip
    if good:
        assert status == 200 and stage.read("raw.ndjson") == data
    else:
        assert (status, b"<Code>BadDigest</Code>" in reply) == (400, True)
        with pytest.raises(StageError):
            stage.read("raw.ndjson")


def test_a_chunked_transfer_put_is_read_to_its_end(stage, tls):
    parts = [b"first part\n", b"second part\n"]
    status, reply = raw_put(
        stage, tls, "streaming/te.ndjson", iter(parts), {"Transfer-Encoding": "chunked"},
        encode_chunked=True,
    )  # fmt: skip
    assert (status, stage.read("te.ndjson")) == (200, b"".join(parts)), reply


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
        client = s3(stage, tls)
        with pytest.raises(botocore.exceptions.ClientError) as excinfo:
            put(client, "streaming/0.ndjson")
        assert error_code(excinfo) == (code, status)
        assert not (tmp_path / "stage/emulator-stage/streaming/0.ndjson").exists()
        put(client, "streaming/0.ndjson")  # the next attempt goes through
        assert stage.read("0.ndjson") == DATA
        assert script.asked == ["stage_put", "stage_put"]
        assert stage.stats()["faults"] == 1


def test_a_delay_fault_delays_then_stores(tmp_path, tls):
    script = Script(FaultDecision("delay", delay_s=0.3))
    with make_stage(tmp_path / "stage", tls, faults=script) as stage:
        started = dt.datetime.now()
        put(s3(stage, tls), "streaming/0.ndjson")
        assert dt.datetime.now() - started >= dt.timedelta(seconds=0.3)
        assert stage.read("0.ndjson") == DATA


@pytest.mark.parametrize(("action", "stored"), [("drop", False), ("lose_ack", True)])
def test_connection_faults_close_without_a_reply(tmp_path, tls, action, stored):
    with make_stage(tmp_path / "stage", tls, faults=Script(FaultDecision(action))) as stage:
        client = s3(stage, tls)
        with pytest.raises(botocore.exceptions.ConnectionClosedError):
            put(client, "streaming/0.ndjson")
        assert (tmp_path / "stage/emulator-stage/streaming/0.ndjson").exists() is stored
        assert stage.stats()["uploads"] == int(stored)
        client.head_bucket(Bucket="emulator-stage")  # the server still serves


def test_remove_and_s3_delete_drop_the_durable_copy(stage, tls, tmp_path):
    client = s3(stage, tls)
    put(client, "streaming/a.ndjson")
    put(client, "streaming/b.ndjson")
    assert stage.remove("emulator-stage/streaming/a.ndjson") is True
    assert stage.remove("a.ndjson") is False
    with pytest.raises(StageError):
        stage.read("a.ndjson")
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        client.get_object(Bucket="emulator-stage", Key="streaming/a.ndjson")
    assert error_code(excinfo) == ("NoSuchKey", 404)
    client.delete_object(Bucket="emulator-stage", Key="streaming/b.ndjson")
    assert not (tmp_path / "stage/emulator-stage/streaming/b.ndjson").exists()


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
