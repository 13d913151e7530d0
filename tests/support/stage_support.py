"""Driving the emulator's S3 stage directly: a throwaway CA and leaf, the stage started on a
directory, boto3 clients holding one grant's credentials, and hand-made PUTs."""

from __future__ import annotations

import datetime as dt
import http.client
import io
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from elastic_channels.emulator.stage import Stage, StageGrant

BUCKET = "emulator-stage"
DATA = bytes(range(256)) * 256  # 64 KiB


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


def make_tls(out: Path) -> dict[str, Path]:
    """A throwaway CA and a leaf for 127.0.0.1/localhost: chain, key and CA files."""
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


def make_stage(directory: Path, tls: dict[str, Path], **kwargs: Any) -> Stage:
    return Stage(directory, cert_chain=tls["chain"], key_file=tls["key"], **kwargs)


@dataclass
class Granted:
    """One client of the stage: its grant, and a boto3 client with the grant's credentials."""

    grant: StageGrant
    s3: Any

    @property
    def prefix(self) -> str:
        """The key prefix of the grant's location (``streaming/<id>/``)."""
        return self.grant.location.partition("/")[2]

    def key(self, name: str) -> str:
        return self.prefix + name

    def put(self, name: str, data: bytes = DATA) -> dict:
        """PutObject of ``<location>/name`` with a file-like body (botocore streams it
        aws-chunked)."""
        return self.s3.put_object(Bucket=BUCKET, Key=self.key(name), Body=io.BytesIO(data))


def s3_client(stage: Stage, tls: dict[str, Path], creds: dict[str, str]) -> Any:
    """A boto3 S3 client for ``stage``: path style, no retries, the test CA."""
    import boto3
    from botocore.config import Config

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
        aws_access_key_id=creds["AWS_KEY_ID"],
        aws_secret_access_key=creds["AWS_SECRET_KEY"],
        aws_session_token=creds["AWS_TOKEN"],
        verify=str(tls["ca"]),
        config=config,
    )


def granted(stage: Stage, tls: dict[str, Path], user: str = "TEST_USER") -> Granted:
    """A new grant of ``stage`` for ``user``, and a client holding it."""
    grant = stage.grant(user)
    return Granted(grant, s3_client(stage, tls, grant.creds))


def error_code(excinfo: Any) -> tuple[str, int]:
    err = excinfo.value.response
    return err["Error"]["Code"], err["ResponseMetadata"]["HTTPStatusCode"]


def raw_put(
    stage: Stage,
    tls: dict[str, Path],
    key: str,
    body: Any,
    headers: dict[str, str],
    creds: dict[str, str] | None = None,
    **request_kwargs: Any,
) -> tuple[int, bytes]:
    """One PUT over TLS with hand-made headers (signed as ``creds``' key id, with their
    session token, if given): (status, reply body)."""
    host, port = stage.url.removeprefix("https://").split(":")
    context = ssl.create_default_context(cafile=str(tls["ca"]))
    conn = http.client.HTTPSConnection(host, int(port), context=context, timeout=10)
    key_id = creds["AWS_KEY_ID"] if creds else "nobody"
    auth = {
        "Authorization": f"AWS4-HMAC-SHA256 Credential={key_id}/20261202/us-west-2/s3/"
        "aws4_request, SignedHeaders=host, Signature=00",
        "x-amz-date": "20261202T000000Z",
    }
    if creds:
        auth["x-amz-security-token"] = creds["AWS_TOKEN"]
    try:
        conn.request(
            "PUT", f"/{BUCKET}/{key}?x-id=PutObject", body=body, headers={**auth, **headers},
            **request_kwargs,
        )  # fmt: skip
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()
