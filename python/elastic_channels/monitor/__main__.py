"""``python -m elastic_channels.monitor``: the same as ``elastic-channels monitor``
(settings from a ``.env`` file in the working directory too, read before the parser's
defaults are)."""

import sys

from ..env_file import load_settings_file
from .cli import main

load_settings_file()
sys.exit(main())
