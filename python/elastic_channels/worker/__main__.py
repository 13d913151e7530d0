"""``python -m elastic_channels.worker``: the same as ``elastic-channels worker``."""

import sys

from ..env_file import load_settings_file
from .main import main

load_settings_file()
sys.exit(main())
