"""The emulator's S3 stage: where the SDK's file mode uploads its encrypted files.

``Stage`` serves one bucket + prefix over HTTPS on loopback, through moto's S3
implementation, and keeps every uploaded object as a durable file; the Snowflake-side
file registration reads them back with ``Stage.read``. ``FaultDecision`` is what the
stage's fault hook returns for an upload.

    with Stage(data_dir / "stage", cert_chain=chain, key_file=key) as stage:
        env = {"AWS_ENDPOINT_URL": stage.url}
        location = {"location": stage.location, "creds": stage.creds(), ...}
        ...
        data = stage.read(fragment["file_path"])
"""

from __future__ import annotations

from .errors import StageError
from .faults import FaultDecision
from .stage import Stage

__all__ = ["FaultDecision", "Stage", "StageError"]
