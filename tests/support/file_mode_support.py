"""File mode by hand: a staged file built, uploaded and registered as SDK 1.9.1 does it.

What the SDK does for a flush over ~1 MiB (../shared/SNOWPIPE_PROTOCOL.md, "File mode"):
NDJSON (each appended chunk followed by one newline) in one zstd frame, AES-CTR under
the pipe key with a random 16-byte IV, PUT to its stage location, then one
``POST .../channels/ELASTIC/filebuffer`` with a JSON list of fragments. The fragment's
fields here are the ones SDK 1.9.1 was seen to send against the emulator (same names,
types and order; ``fragment_length_uncompressed_bytes`` counts a byte per row where the
file holds a newline per chunk, so one chunk gives plaintext + rows - 1).
"""

from __future__ import annotations

import base64
import functools
import http.client
import io
import json
import os
import secrets
import ssl
import time
from dataclasses import dataclass
from typing import Any

import zstandard
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from elastic_channels.rows import ResortGenerator

PIPE = "/v2/streaming/databases/EMULATOR_DB/schemas/PUBLIC/pipes/RESORT_SALES_PIPE"
FILEBUFFER = (
    "/v2/streaming/data/databases/EMULATOR_DB/schemas/PUBLIC/pipes/RESORT_SALES_PIPE"
    "/channels/ELASTIC/filebuffer"
)
SALE_TIME_US = 10**15


def ndjson(run_id: str, rows: int) -> bytes:
    """``rows`` resort rows as the SDK's file holds one appended chunk: NDJSON + one newline."""
    return ResortGenerator(run_id, 0).next_batch(rows, SALE_TIME_US) + b"\n"


def landed(emu: Any, run_id: str) -> int:
    """Rows of ``run_id`` in an in-process emulator's table (``make_emulator``), once
    landing is done; fails on a TXID twice."""
    assert emu.wait_landed(30), "landing did not finish in 30 s"
    ((n, distinct),) = emu.query(
        f"SELECT count(*), count(DISTINCT TXID) FROM RESORT_SALES WHERE RUN_ID = '{run_id}'"
    )
    assert n == distinct, f"{run_id}: a TXID landed more than once"
    return n


def encrypt(key: bytes, iv: bytes, data: bytes) -> bytes:
    """AES-CTR under ``key``, the counter block starting at ``iv`` (encryption_version
    AES-CTR-128.1)."""
    return Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor().update(data)


@dataclass(frozen=True)
class SealedFile:
    """One fragment's bytes as uploaded, and what they hold."""

    data: bytes  # encrypted
    plain: bytes  # the NDJSON the zstd frame inflates to
    rows: int
    iv: bytes


def seal(
    run_id: str, rows: int, key: bytes, *, iv: bytes | None = None, payload: bytes | None = None
) -> SealedFile:
    """``rows`` rows of ``run_id`` in one zstd frame, encrypted under ``key``; ``payload``:
    encrypt these bytes instead of the frame (a file that is not what it claims)."""
    plain = ndjson(run_id, rows)
    iv = secrets.token_bytes(16) if iv is None else iv
    frame = zstandard.ZstdCompressor().compress(plain) if payload is None else payload
    return SealedFile(encrypt(key, iv, frame), plain, rows, iv)


class FileModeClient:
    """One emulator's file mode, driven by hand: pipe-info, stage uploads, registrations.

    ``info``: the emulator's info dict (``Emulator.info()`` or ``EmulatorProcess.info``);
    ``token``: a scoped token for its data calls."""

    def __init__(self, info: dict[str, Any], token: str) -> None:
        self.info, self.token = info, token
        self.port = int(info["properties"]["port"])
        self.ca = info["ssl_cert_file"]
        status, body = self.call("POST", PIPE + ":pipe-info", b"{}")
        assert status == 200, body
        encryption = body["encryption_info"]
        self.key = base64.b64decode(encryption["pipe_key"])
        self.key_id = str(encryption["pipe_key_id"])
        self.diversifier = encryption["diversifier"]
        self.stage = body["durable_stage_location"]
        self.bucket, _, self.prefix = self.stage["location"].partition("/")

    def call(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        """One HTTPS call with the scoped token: (status, decoded JSON or raw body)."""
        ctx = ssl.create_default_context(cafile=self.ca)
        conn = http.client.HTTPSConnection("localhost", self.port, context=ctx, timeout=30)
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            status, out = resp.status, resp.read()
        finally:
            conn.close()
        try:
            return status, json.loads(out)
        except ValueError:
            return status, out

    @functools.cached_property
    def s3(self) -> Any:
        """A boto3 client for the stage, with pipe-info's credentials; no retries."""
        import boto3
        from botocore.config import Config

        creds = self.stage["creds"]
        config = Config(
            s3={"addressing_style": "path"},
            retries={"total_max_attempts": 1, "mode": "standard"},
            connect_timeout=5,
            read_timeout=15,
        )
        return boto3.session.Session().client(
            "s3",
            endpoint_url=self.info["client_env"]["AWS_ENDPOINT_URL"],
            region_name=self.stage["region"],
            aws_access_key_id=creds["AWS_KEY_ID"],
            aws_secret_access_key=creds["AWS_SECRET_KEY"],
            aws_session_token=creds["AWS_TOKEN"],
            verify=self.ca,  # the environment's AWS_CA_BUNDLE is the system's
            config=config,
        )

    def upload(self, name: str, data: bytes) -> tuple[str, str]:
        """PUT ``data`` as ``name`` under this client's stage location, streamed
        (aws-chunked, as the SDK sends it): (file_path as the SDK registers it, etag)."""
        key = self.prefix + name
        reply = self.s3.put_object(Bucket=self.bucket, Key=key, Body=io.BytesIO(data))
        return f"{self.bucket}/{key}", reply["ETag"].strip('"')

    def fragment(
        self,
        file_path: str,
        etag: str,
        sealed: SealedFile,
        *,
        file_length: int | None = None,
        start: int = 0,
        **override: Any,
    ) -> dict[str, Any]:
        """The fragment SDK 1.9.1 registers for ``sealed``, at ``start`` of a file of
        ``file_length`` bytes (default: the fragment is the whole file); ``override``
        replaces fields."""
        frag = {
            "file_path": file_path,
            "content_type": "application/x-ndjson",
            "file_etag": etag,
            "file_length_bytes": len(sealed.data) if file_length is None else file_length,
            "fragment_length_bytes": len(sealed.data),
            "fragment_length_uncompressed_bytes": len(sealed.plain) + sealed.rows - 1,
            "fragment_start_offset_token": "",
            "fragment_end_offset_token": "",
            "fragment_row_count": sealed.rows,
            "fragment_start_byte_offset": start,
            "diversifier": self.diversifier,
            "master_key_id": self.key_id,
            "iv_base64": base64.b64encode(sealed.iv).decode(),
            "encryption_version": "AES-CTR-128.1",
            "min_append_timestamp_ms": int(time.time() * 1000),
        }
        return {**frag, **override}

    def stage_file(self, name: str, run_id: str, rows: int) -> dict[str, Any]:
        """Seal ``rows`` rows of ``run_id``, upload them as ``name``: their fragment."""
        sealed = seal(run_id, rows, self.key)
        return self.fragment(*self.upload(name, sealed.data), sealed)

    def register(self, body: Any, request_id: str | None = None) -> tuple[int, Any]:
        """POST a registration (``body`` as JSON, or raw bytes); (status, reply), or
        (0, error) if the connection died without a reply."""
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        rid = request_id or os.urandom(8).hex()
        try:
            return self.call("POST", f"{FILEBUFFER}?requestId={rid}", raw)
        except (http.client.HTTPException, ConnectionError, ssl.SSLError, OSError) as e:
            return 0, e
