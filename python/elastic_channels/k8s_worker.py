"""``python -m elastic_channels.k8s_worker``: the worker, under the name the fleet's
image and Job use (the same as ``elastic-channels worker``)."""

import sys

from elastic_channels.env_file import load_settings_file
from elastic_channels.worker.main import main

if __name__ == "__main__":
    load_settings_file()
    sys.exit(main(prog="k8s_worker"))
