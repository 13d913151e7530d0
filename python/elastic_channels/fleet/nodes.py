"""Node types a fleet can be planned on, and how many worker pods fit on one.

Sizes are the EC2 instance types' (vCPU, GiB). Each node keeps some of itself back
for the kubelet, the system reserve and the system DaemonSets (VPC CNI, kube-proxy,
log and metrics agents); the reserve here is an estimate set so that the reference
benchmark's layout comes out: 31 one-vCPU pods on a 32-vCPU m7g.8xlarge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


def ceil_count(x: float) -> int:
    """Whole pods or nodes for ``x`` (8.188 GB/s / 92 MB/s is 89 pods, not 90)."""
    return math.ceil(round(x, 9))


@dataclass(frozen=True)
class NodeType:
    name: str
    vcpu: int
    memory_gib: int
    reserved_vcpu: float
    reserved_gib: float

    @property
    def pod_vcpu(self) -> float:
        """vCPU left for worker pods."""
        return self.vcpu - self.reserved_vcpu

    @property
    def pod_gib(self) -> float:
        """GiB left for worker pods."""
        return self.memory_gib - self.reserved_gib

    def pods_per_node(self, pod_vcpu: float, pod_mib: int) -> int:
        """Pods of ``pod_vcpu`` and ``pod_mib`` that fit in what is left for pods."""
        by_cpu = math.floor(round(self.pod_vcpu / pod_vcpu, 9))
        by_memory = math.floor(round(self.pod_gib * 1024 / pod_mib, 9))
        return max(0, min(by_cpu, by_memory))

    def describe(self) -> str:
        return (
            f"{self.name} ({self.vcpu} vCPU, {self.memory_gib} GiB; "
            f"{self.pod_vcpu:g} vCPU and {self.pod_gib:g} GiB for pods)"
        )


#: Graviton (arm64) general-purpose (m7g, 4 GiB per vCPU) and compute-optimised
#: (c7g, 2 GiB per vCPU) types: (name, vCPU, GiB, reserved vCPU, reserved GiB).
_TABLE = (
    ("m7g.2xlarge", 8, 32, 1, 2),
    ("m7g.4xlarge", 16, 64, 1, 3),
    ("m7g.8xlarge", 32, 128, 1, 4),
    ("m7g.12xlarge", 48, 192, 2, 6),
    ("m7g.16xlarge", 64, 256, 2, 8),
    ("c7g.2xlarge", 8, 16, 1, 2),
    ("c7g.4xlarge", 16, 32, 1, 3),
    ("c7g.8xlarge", 32, 64, 1, 4),
    ("c7g.12xlarge", 48, 96, 2, 6),
    ("c7g.16xlarge", 64, 128, 2, 8),
)  # fmt: skip
NODES: dict[str, NodeType] = {row[0]: NodeType(*row) for row in _TABLE}
DEFAULT_NODE = "m7g.8xlarge"


def node_type(name: str) -> NodeType:
    """The node type called ``name``; a ValueError listing the known ones otherwise."""
    try:
        return NODES[name]
    except KeyError:
        raise ValueError(f"unknown node type {name!r}; known: {', '.join(NODES)}") from None


#: The reference benchmark's fleet (October 2026, ../shared/CONTEXT.md), measured on
#: Graviton against Snowflake: 455 one-channel pods at ~92 MB/s each, 41.8 GB/s in all,
#: each pod using 240-540m CPU and 68-183 MiB RSS, batch acks in 570-611 ms.
REFERENCE: dict[str, Any] = {"pods": 455, "nodes": 15, "node": "m7g.8xlarge", "pod_vcpu": 1.0,
             "pod_memory_mib": 1024, "pod_mbps": 92.0, "total_gbps": 41.8,
             "channels_per_pod": 1, "ack_latency_s": 0.6, "cpu_m": (240, 540),
             "rss_mib": (68, 183), "ack_latency_ms": (570, 611),
             "arch": "arm64, AWS Graviton", "target": "Snowflake"}  # fmt: skip


def reference_at(target_gbps: float) -> dict[str, Any]:
    """The reference's layout (92 MB/s per 1-vCPU/1-GiB pod) scaled to the target."""
    pods = ceil_count(target_gbps * 1000 / REFERENCE["pod_mbps"])
    node = NODES[REFERENCE["node"]]
    per_node = node.pods_per_node(REFERENCE["pod_vcpu"], REFERENCE["pod_memory_mib"])
    nodes = ceil_count(pods / per_node)
    return {**REFERENCE, "pods": pods, "nodes": nodes, "pods_per_node": per_node,
            "vcpu_nodes": nodes * node.vcpu, "memory_nodes_gib": nodes * node.memory_gib,
            "measured": REFERENCE}  # fmt: skip
