"""Write a workload's resolved replay table to stdout, for the Rust benches.

    python benches/dump_workload.py iot-telemetry > iot.table

The table as `elastic_native.WorkloadTable` takes it, in a plain binary layout that
`benches/workload_writer.rs` reads without Python: little-endian u64 counts and
lengths, then the bytes.

    entries, stride
    pieces: count, then (length, bytes) each
    ids: length, bytes (native-endian u32 piece numbers)
    template: count, then (kind length, kind, payload length, payload) each
"""

from __future__ import annotations

import argparse
import struct
import sys

from elastic_channels.workload import WorkloadError, load_workload, resolve


def encode(table) -> bytes:
    out = [struct.pack("<QQ", table.entries, table.stride), struct.pack("<Q", len(table.pieces))]
    out += [struct.pack("<Q", len(p)) + p for p in table.pieces]
    out.append(struct.pack("<Q", len(table.ids)) + table.ids)
    out.append(struct.pack("<Q", len(table.template)))
    for kind, payload in table.template:
        k = kind.encode()
        out.append(struct.pack("<Q", len(k)) + k + struct.pack("<Q", len(payload)) + payload)
    return b"".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("workload", help="a shipped workload's name, or a workload file")
    args = p.parse_args(argv)
    try:
        table = resolve(load_workload(args.workload)).table
    except WorkloadError as e:
        p.error(str(e))
    sys.stdout.buffer.write(encode(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
