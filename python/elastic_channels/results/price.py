"""A run's ingest price: its billable bytes (the values' bytes, by Snowflake's rule:
:mod:`elastic_channels.billable`) in GB, times the credits Snowflake charges per GB,
times what a credit costs the user.

The two settings are one table (:data:`PRICE_SETTINGS`, flag, environment variable,
default and help together): the credits per GB default to the published rate, with its
source and date; the price of a credit has no default (contracts differ, and a guessed
dollar figure would read as a quote), so without it the cost is said in credits only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..setting import Setting

__all__ = [
    "CREDITS_PER_GB",
    "CREDITS_SOURCE",
    "GB",
    "PRICE_SETTINGS",
    "billable_figures",
    "dollars",
    "price_line",
    "price_settings",
]

#: Credits per uncompressed GB of values ingested by the high-performance architecture.
CREDITS_PER_GB = 0.0037
#: Where :data:`CREDITS_PER_GB` comes from.
CREDITS_SOURCE = "Snowflake's consumption table, effective 2026-01-13"
#: Bytes in a billed GB: the cost page's example takes 1 GB = 1000 MB.
GB = 1e9


def _rate(text: str) -> float:
    """A finite number of 0 or more (ValueError otherwise)."""
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"must be a finite number of 0 or more, got {text!r}")
    return value


_rate.__name__ = "non-negative number"  # argparse: "invalid non-negative number value: '-2'"
#: The same check, for other commands' money flags (plan's --node-price-per-hour).
non_negative = _rate

PRICE_SETTINGS: tuple[Setting, ...] = (
    Setting("credits_per_gb", "--credits-per-gb", "Snowflake credits per uncompressed GB of "
            f"values ingested (high-performance architecture; the default is {CREDITS_SOURCE}, "
            "docs/RESULTS.md; your contract may differ)", _rate, CREDITS_PER_GB,
            "INGEST_CREDITS_PER_GB", group="price"),
    Setting("price_per_credit", "--price-per-credit", "what one credit costs you, in dollars: "
            "your contract's figure. No default is guessed: without it the ingest cost is "
            "shown in credits only", _rate, None, "PRICE_PER_CREDIT", group="price",
            default_text="none: cost in credits only"),
)  # fmt: skip


def price_settings(given: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """``credits_per_gb`` and ``price_per_credit``: each the flag's value in ``given`` if
    set, else its environment variable, else its default (SettingError naming the
    variable for a bad one)."""
    return {s.name: s.value(given.get(s.name), environ) for s in PRICE_SETTINGS}


def _billable_bytes(summaries: Sequence[Mapping[str, Any]]) -> int | None:
    """The run's billable bytes, warmup included (it is ingested, so billed); None when
    no worker counted them (a result from before they were counted)."""
    counted = [s for s in summaries if s and "billable_bytes" in s]
    if not counted:
        return None
    return sum(int(s["billable_bytes"] or 0) + int(s.get("warmup_billable_bytes") or 0)
               for s in counted)  # fmt: skip


def billable_figures(
    summaries: Sequence[Mapping[str, Any]], price: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``billable_gb`` (the run's values, warmup included), ``ingest_credits`` (at the
    run's ``credits_per_gb``, else the default) and ``ingest_cost`` (dollars; None
    without a ``price_per_credit``)."""
    billable = _billable_bytes(summaries)
    price = price or {}
    per_gb = price.get("credits_per_gb")
    per_gb = CREDITS_PER_GB if per_gb is None else float(per_gb)
    per_credit = price.get("price_per_credit")
    if billable is None:
        return {"billable_gb": None, "ingest_credits": None, "ingest_cost": None}
    gb = billable / GB
    credits = gb * per_gb
    cost = credits * float(per_credit) if per_credit is not None else None
    return {
        "billable_gb": _sig(gb),
        "ingest_credits": _sig(credits),
        "ingest_cost": _sig(cost) if cost is not None else None,
    }


def _sig(x: float) -> float:
    """``x`` to 6 significant digits (a short run's cost is a tiny sum, not 0)."""
    return float(f"{x:.6g}")


def price_line(figures: Mapping[str, Any], price: Mapping[str, Any] | None) -> str | None:
    """The run summary's line: ``billable: X GB of values -> Y credits (at R credits/GB,
    source) = $Z at $P a credit``; without a price per credit, the credits and how to
    get dollars. None when the run counted no billable bytes."""
    if figures.get("billable_gb") is None:
        return None
    price = price or {}
    per_gb = price.get("credits_per_gb")
    source = CREDITS_SOURCE if per_gb in (None, CREDITS_PER_GB) else "as set"
    per_gb = CREDITS_PER_GB if per_gb is None else per_gb
    line = (
        f"billable: {figures['billable_gb']:.6g} GB of values -> "
        f"{figures['ingest_credits']:.6g} credits (at {per_gb:g} credits/GB, {source})"
    )
    per_credit = price.get("price_per_credit")
    if per_credit is None or figures.get("ingest_cost") is None:
        return line + "; set --price-per-credit or PRICE_PER_CREDIT for the cost in dollars"
    return line + f" = {dollars(figures['ingest_cost'])} at ${per_credit:g} a credit"


def dollars(x: float) -> str:
    """``$1,670.40``; a sum under a cent in two significant digits (``$1.6e-05``)."""
    return f"${x:,.2f}" if x >= 0.01 or x == 0 else f"${x:.2g}"
