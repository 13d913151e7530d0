"""The stage's bucket inside moto, and the only module that touches moto's internals.

moto keeps S3 state in a process-wide registry (``moto.s3.models.s3_backends``) keyed by
account id, and takes the account from an ``x-moto-account-id`` header when
``MOTO_ACCOUNT_ID`` is not set. Each stage uses an account id of its own, so two stages,
or a stage and a test's ``mock_aws``, do not share objects; bucket names are still
process-wide in moto (as in S3), so two live stages need two bucket names.

moto holds an object's bytes in memory (up to ~5 MB, then a temporary file). The stage keeps
objects on disk instead, so ``take`` pops an object right after moto has stored it and
``load`` puts one back only for the span of a GET/HEAD. A dropped key is disposed of, and
also removed from moto's instance tracker and its (empty) tag entry, which would otherwise
keep something of every key ever made.
"""

from __future__ import annotations

import os
import random
from typing import Any

from moto.moto_server.werkzeug_app import create_backend_app
from moto.s3.models import FakeKey, s3_backends

__all__ = ["MotoBucket"]

#: moto's partition for every ordinary AWS region, and so the S3 backend the stage uses.
_PARTITION = "aws"


class MotoBucket:
    """One bucket in a moto S3 backend of its own, and moto's WSGI app for S3."""

    def __init__(self, bucket: str, region: str = "us-west-2") -> None:
        self.bucket = bucket
        self.region = region
        self.account_id = os.environ.get("MOTO_ACCOUNT_ID") or str(random.randrange(10**11, 10**12))
        self.app: Any = None

    def create(self) -> None:
        """Create the bucket and moto's S3 app (a Flask app scoped to the S3 routes)."""
        if self.bucket in s3_backends.bucket_accounts:
            raise ValueError(f"bucket {self.bucket!r} is already held in this process's moto")
        self._backend().create_bucket(self.bucket, self.region)
        self.app = create_backend_app("s3")

    def destroy(self) -> None:
        """Drop every object, the bucket and this stage's moto account."""
        bucket = self._backend().buckets.get(self.bucket)
        if bucket is not None:
            for key in list(bucket.keys):
                self.take(key)
            self._backend().delete_bucket(self.bucket)
        s3_backends.pop(self.account_id, None)

    def take(self, key: str) -> bytes | None:
        """Remove ``key`` from moto; the bytes it held, or None if it held none."""
        keys = self._bucket().keys
        versions = [v for v in keys.getlist(key, []) if isinstance(v, FakeKey)]
        if not versions:
            return None
        data = versions[-1].value
        keys.pop(key)  # disposes of every version's buffer
        for version in versions:
            self._backend().tagger.delete_all_tags_for_resource(version.arn)
            _untrack(version)
        return data

    def load(self, key: str, data: bytes) -> None:
        """Put ``data`` into moto as ``key`` (replacing any copy), for moto to serve."""
        self.take(key)
        self._backend().put_object(self.bucket, key, data)

    def _backend(self) -> Any:
        return s3_backends[self.account_id][_PARTITION]

    def _bucket(self) -> Any:
        return self._backend().get_bucket(self.bucket)


def _untrack(key: FakeKey) -> None:
    tracked = FakeKey.instances_tracked  # type: ignore[attr-defined]
    for i in range(len(tracked) - 1, -1, -1):
        if tracked[i] is key:
            del tracked[i]
            return
