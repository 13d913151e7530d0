"""What a planned fleet costs an hour: the ingest (Snowflake bills the values' bytes,
results/price.py) beside the nodes the pods run on.

The ingest is the same whatever the fleet: target bytes/s of NDJSON, times the share of
those bytes that are values (measured on the workload's own rows: the writer's count
over a batch's length), times the credits per GB and the price of a credit. The nodes
are the plan's count times an instance price per hour the user gives (none is guessed:
prices differ by region, term and discount).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from ..results.price import CREDITS_SOURCE, GB

__all__ = ["add_cost_arguments", "billable_share", "cost_text", "hourly_cost"]


def add_cost_arguments(p: argparse.ArgumentParser) -> None:
    from ..results.price import PRICE_SETTINGS, non_negative
    from ..setting import add_flags

    add_flags(p, PRICE_SETTINGS)
    p.add_argument(
        "--node-price-per-hour",
        type=non_negative,
        default=None,
        metavar="DOLLARS",
        help="what one node costs an hour (your region's and terms' price): the pods' "
        "cost beside the ingest's; none is guessed",
    )


def billable_share(rows: int = 1000) -> float:
    """The share of resort-sales NDJSON that is values (what is billed), measured on
    the generator's own batch: its billable count over its length."""
    from ..rows.backend import make_generator, select_backend

    gen = make_generator("plan", 0, backend=select_backend())
    t = 1_765_000_000_000_000
    billable = gen.billable_len(rows, t)
    if not billable:
        raise ValueError("the row generator does not count billable bytes")
    return billable / gen.batch_len(rows, t)


def hourly_cost(
    target_gbps: float,
    nodes: int,
    price: Mapping[str, Any],
    node_price: float | None,
    share: float,
) -> dict[str, Any]:
    """The ingest's and the nodes' cost an hour (dollars None where no price is given)."""
    billable_gb = target_gbps * 1e9 * share * 3600 / GB
    credits = billable_gb * float(price["credits_per_gb"])
    per_credit = price.get("price_per_credit")
    ingest = None if per_credit is None else credits * float(per_credit)
    pods = None if node_price is None else nodes * node_price
    return {
        "billable_share": round(share, 4),
        "billable_gb_per_hour": round(billable_gb, 1),
        "credits_per_gb": price["credits_per_gb"],
        "ingest_credits_per_hour": round(credits, 2),
        "price_per_credit": per_credit,
        "ingest_dollars_per_hour": None if ingest is None else round(ingest, 2),
        "node_price_per_hour": node_price,
        "nodes_dollars_per_hour": None if pods is None else round(pods, 2),
    }


def cost_text(c: Mapping[str, Any], nodes: int) -> str:
    """The plan's cost lines."""
    ingest = (
        f"ingest: {c['billable_gb_per_hour']:,.1f} GB of values an hour "
        f"({c['billable_share'] * 100:.0f}% of the NDJSON) x {c['credits_per_gb']:g} "
        f"credits/GB ({CREDITS_SOURCE}) = {c['ingest_credits_per_hour']:,.2f} credits an hour"
    )
    if c["ingest_dollars_per_hour"] is not None:
        ingest += f" = ${c['ingest_dollars_per_hour']:,.2f} at ${c['price_per_credit']:g} a credit"
    else:
        ingest += " (--price-per-credit for dollars)"
    if c["nodes_dollars_per_hour"] is not None:
        pods = (f"nodes: {nodes} x ${c['node_price_per_hour']:g} = "
                f"${c['nodes_dollars_per_hour']:,.2f} an hour")  # fmt: skip
    else:
        pods = f"nodes: {nodes} (--node-price-per-hour for their cost beside the ingest's)"
    return ingest + "\n" + pods
