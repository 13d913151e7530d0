"""The monitor: follows a run's worker lines and writes its windows to the metrics
table (``elastic-channels monitor``). Submodules are imported on use, so the worker can
use :mod:`.histogram` without loading the rest."""
