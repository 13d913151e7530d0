"""A workload as ``deploy/run_job.sh --workload NAME|FILE`` renders it into the Job, and
``deploy/deploy_monitor.sh --workload NAME|FILE`` into the monitor's Deployment.

A shipped workload (``iot-telemetry`` ...) is in the image: the pods get its name. A
workload file is on this machine only: its text travels in the ConfigMap (the run's, or
the monitor's) under the key ``workload.yaml``, the pod template mounts that key
read-only at :data:`MOUNTED`, and the pods get ``--workload`` :data:`MOUNTED`.

``python -m elastic_channels.fleet.k8s_workload NAME|FILE [--where NAME]`` checks the
workload here, with the package's own loader (a bad file is refused before anything is
applied, naming the file, line, column and key; exit 2), and prints shell assignments
that ``check_workload`` in ``deploy/lib/common.sh`` evaluates for both scripts:

- ``WORKLOAD_ARGS``: ``--workload`` and its value as lines of the container's ``args``
  (the monitor's ``command``);
- ``WORKLOAD_ARG``: that value alone (the name, or :data:`MOUNTED`);
- ``WORKLOAD_PIPE``: the workload's pipe (the Job's ``SNOWFLAKE_PIPE`` unless one is
  named);
- ``WORKLOAD_DATA_LINE``: the ConfigMap's ``workload.yaml`` key, the file's text as it
  is (a comment line for a shipped name);
- ``WORKLOAD_MOUNT_DIR`` and ``WORKLOAD_KEY``: where the pods mount that key (both
  empty for a shipped name).
- ``WORKLOAD_SOURCE``: the workload as given (the name, or the file's path here).

A file is read once, and the text checked is the text shipped. It is quoted as
``k8s_scenario`` quotes ``scenario.yaml`` (one JSON double-quoted scalar, ``$`` as
``\\u0024``), so no text of the file can end the scalar or fill a template placeholder.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from ..landing_table import DEFAULT_WORKLOAD, WorkloadArgError, load_checked
from ..workload import WorkloadError, is_path, load_text
from .k8s_scenario import arg_lines, yaml_scalar

__all__ = ["KEY", "MAX_BYTES", "MOUNTED", "MOUNT_DIR", "main", "workload_values"]

#: Where the Job mounts the ConfigMap's workload key, and the key (the file's name there).
MOUNT_DIR = "/etc/elastic-channels"
KEY = "workload.yaml"
MOUNTED = f"{MOUNT_DIR}/{KEY}"
#: The largest workload file, in bytes of UTF-8. A ConfigMap holds at most 1 MiB, and
#: Kubernetes that allows any environment variable name (1.32 and later, by default)
#: also hands every key of it to the pods as one through ``envFrom``; Linux refuses to
#: start a process with a variable of more than 128 KiB.
MAX_BYTES = 120 * 1024


def workload_values(value: str | None, where: str = "--workload") -> dict[str, str]:
    """The shell variables for ``run_job.sh`` and ``deploy_monitor.sh`` (see the module's
    docstring) for workload ``value`` (None or empty: resort-sales);
    :class:`WorkloadArgError` naming ``where`` and what is wrong."""
    name = (value or "").strip() or DEFAULT_WORKLOAD
    if not is_path(name):
        shipped = load_checked(name, where)  # an unknown name is refused here
        return _values(
            name,
            name,
            shipped.pipe,
            f"  # workload {name}: shipped in the image, no file to mount",
            mount_dir="",
        )
    text = _read(name, where)
    try:
        # As the pods' worker reads the mounted file (Path.read_text: universal newlines).
        checked = load_text(text.replace("\r\n", "\n").replace("\r", "\n"), name)
    except WorkloadError as e:
        raise WorkloadArgError(f"{where}: {e}") from None
    data_line = f"  {KEY}: {yaml_scalar(text)}"
    return _values(name, MOUNTED, checked.pipe, data_line, mount_dir=MOUNT_DIR)


def _values(source: str, arg: str, pipe: str, data_line: str, mount_dir: str) -> dict[str, str]:
    return {
        "WORKLOAD_SOURCE": source,
        "WORKLOAD_ARGS": arg_lines(["--workload", arg]),
        "WORKLOAD_ARG": arg,
        "WORKLOAD_PIPE": pipe,
        "WORKLOAD_DATA_LINE": data_line,
        "WORKLOAD_MOUNT_DIR": mount_dir,
        "WORKLOAD_KEY": KEY if mount_dir else "",
    }


def _read(path: str, where: str) -> str:
    """The file's text, exactly (no newline translation); errors as the loader words
    them."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise WorkloadArgError(f"{where}: {path}: cannot read it: {e.strerror}") from None
    if len(data) > MAX_BYTES:
        raise WorkloadArgError(
            f"{where}: {path}: {len(data)} bytes, and the pods can be handed at most "
            f"{MAX_BYTES} (it travels in the run's ConfigMap, whose keys newer Kubernetes "
            "also makes environment variables, of at most 128 KiB each)"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise WorkloadArgError(f"{where}: {path}: not UTF-8 text: {e.reason}") from None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m elastic_channels.fleet.k8s_workload",
        description="Check a workload and print the shell variables deploy/run_job.sh and "
        "deploy/deploy_monitor.sh render into their pods (a file's text in the ConfigMap, "
        "mounted into the pods).",
    )
    p.add_argument("workload", help="a shipped workload's name, or a workload file")
    p.add_argument(
        "--where", default="--workload", help="how errors name where it was given [--workload]"
    )
    a = p.parse_args(argv)
    try:
        values = workload_values(a.workload, a.where)
    except WorkloadArgError as e:
        print(e, file=sys.stderr)
        return 2
    for name, value in values.items():
        print(f"{name}={shlex.quote(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
