"""``python -m elastic_channels``: the same as ``elastic-channels``."""

import sys

from .cli import main

sys.exit(main())
