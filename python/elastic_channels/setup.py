"""``python -m elastic_channels.setup``: the same as ``elastic-channels setup``."""

import sys

from elastic_channels.env_file import load_settings_file
from elastic_channels.snowflake.cli import main

if __name__ == "__main__":
    load_settings_file()
    sys.exit(main())
