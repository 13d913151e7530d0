"""A local Snowpipe Streaming emulator: the real SDK ingests into DuckDB over HTTPS.

See ``docs/EMULATOR.md``. The in-process API is :class:`Emulator`; the CLI is
``python -m elastic_channels.emulator {serve,query,stats,faults}``.
"""

from .emulator import Emulator, EmulatorConfig
from .http.faults import Fault, FaultTable

__all__ = ["Emulator", "EmulatorConfig", "Fault", "FaultTable"]
