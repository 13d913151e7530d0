"""``python -m elastic_channels.emulator {serve,query,stats,faults}`` (an alias of
``elastic-channels emulator ...``)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
