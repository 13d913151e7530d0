"""``python -m elastic_channels.setup``: the same as ``elastic-channels setup``."""

import sys

from elastic_channels.snowflake.cli import main

if __name__ == "__main__":
    sys.exit(main())
