"""``python -m elastic_channels.k8s_worker``: the worker, under the name the fleet's
image and Job use (the same as ``elastic-channels worker``)."""

import sys

from elastic_channels.worker.main import main

if __name__ == "__main__":
    sys.exit(main(prog="k8s_worker"))
