"""The emulator's S3 stage: where the SDK's file mode uploads its encrypted files.

``Stage`` serves one bucket + prefix over HTTPS on loopback, through moto's S3
implementation, and keeps every uploaded object as a durable file; the Snowflake-side
file registration reads them back with ``Stage.read``. Each client gets a location of its
own and credentials for it alone (``Stage.grant``); registration checks that a file lies
in a location granted to the registering user (``Stage.check_owner``). The stage keeps its
port and its credentials' secret in its directory, so it comes back at the same address,
honouring the same credentials, after a restart. ``FaultDecision`` is what the stage's
fault hook returns for an upload.

    with Stage(data_dir / "stage", cert_chain=chain, key_file=key) as stage:
        env = {"AWS_ENDPOINT_URL": stage.url}
        grant = stage.grant(user)
        location = {"location": grant.location, "creds": grant.creds, ...}
        ...
        stage.check_owner(fragment["file_path"], user)
        data = stage.read(fragment["file_path"])
"""

from __future__ import annotations

from .auth import StageGrant
from .errors import StageError
from .faults import FaultDecision
from .server import PortTaken
from .stage import Stage

__all__ = ["FaultDecision", "PortTaken", "Stage", "StageError", "StageGrant"]
