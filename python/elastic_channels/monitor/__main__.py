"""``python -m elastic_channels.monitor``: the same as ``elastic-channels monitor``."""

import sys

from .cli import main

sys.exit(main())
