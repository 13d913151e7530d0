"""The Resort sales page's breakdowns, each a sum over the rows of one aggregate.

The target returns sales and revenue per resort, category, customer type and payment
method (``sales_sql.sales_mix``: a few thousand rows, one scan of the table); every
breakdown here adds those rows up, so one scan serves them all. A resort's region
(state or province) and price tier are not columns of the table: they come from the
model (``model.RESORTS``); the names shown for codes from ``labels``.
"""

from __future__ import annotations

import pandas as pd

from ..model import RESORTS
from .labels import CATEGORY, CUSTOMER_TYPE, PAYMENT_METHOD, PRICE_TIER, REGION, label

__all__ = ["by_region", "by_resort", "category_by_resort", "share", "summable"]

_REGION_OF = {r.name: label(REGION, r.region) for r in RESORTS}
_TIER_OF = {r.name: label(PRICE_TIER, r.tier) for r in RESORTS}
PASSHOLDER = "PASSHOLDER"
MIX_COLUMNS = ("RESORT", "CATEGORY", "CUSTOMER_TYPE", "PAYMENT_METHOD", "SALES", "REVENUE")


def summable(mix: pd.DataFrame) -> pd.DataFrame:
    """The aggregate with numeric SALES and REVENUE (an empty one has the columns too)."""
    if mix.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in MIX_COLUMNS}).astype(
            {"SALES": "int64", "REVENUE": "float64"}
        )
    out = mix.copy()
    out["SALES"] = pd.to_numeric(out["SALES"]).astype("int64")
    out["REVENUE"] = pd.to_numeric(out["REVENUE"]).astype("float64")
    return out


def _pct(part: pd.Series, whole: pd.Series | float) -> pd.Series:
    return 100.0 * part / whole


def by_resort(mix: pd.DataFrame) -> pd.DataFrame:
    """Per resort, largest revenue first: ``RESORT``, ``REGION``, ``TIER``, ``REVENUE``,
    ``SALES``, ``REVENUE_PCT`` (of all revenue), ``PASSHOLDER_PCT`` (of its sales made by
    passholders), ``PASSHOLDER_REVENUE_PCT``."""
    mix = summable(mix)
    ph = mix["CUSTOMER_TYPE"] == PASSHOLDER
    per = (
        mix.assign(PH_SALES=mix["SALES"].where(ph, 0), PH_REVENUE=mix["REVENUE"].where(ph, 0.0))
        .groupby("RESORT", as_index=False)[["REVENUE", "SALES", "PH_SALES", "PH_REVENUE"]]
        .sum()
    )
    per.insert(1, "REGION", per["RESORT"].map(_REGION_OF).fillna("unknown"))
    per.insert(2, "TIER", per["RESORT"].map(_TIER_OF).fillna("unknown"))
    per["REVENUE_PCT"] = _pct(per["REVENUE"], per["REVENUE"].sum())
    per["PASSHOLDER_PCT"] = _pct(per["PH_SALES"], per["SALES"])
    per["PASSHOLDER_REVENUE_PCT"] = _pct(per["PH_REVENUE"], per["REVENUE"])
    per = per.drop(columns=["PH_SALES", "PH_REVENUE"])
    return per.sort_values(["REVENUE", "RESORT"], ascending=[False, True], ignore_index=True)


def by_region(resorts: pd.DataFrame) -> pd.DataFrame:
    """Per region (state or province) from :func:`by_resort`: ``REGION``, ``REVENUE``,
    ``SALES``, ``REVENUE_PCT``, ``RESORTS`` (selling), largest revenue first."""
    per = resorts.groupby("REGION", as_index=False).agg(
        REVENUE=("REVENUE", "sum"), SALES=("SALES", "sum"), RESORTS=("RESORT", "count")
    )
    per.insert(3, "REVENUE_PCT", _pct(per["REVENUE"], per["REVENUE"].sum()))
    return per.sort_values(["REVENUE", "REGION"], ascending=[False, True], ignore_index=True)


def category_by_resort(mix: pd.DataFrame, resorts: list[str]) -> pd.DataFrame:
    """Each of ``resorts``' revenue per category: ``RESORT``, ``CATEGORY`` (its name),
    ``REVENUE``, ``SHARE_PCT`` (of the resort's revenue), in ``resorts`` order."""
    mix = summable(mix)
    mix = mix[mix["RESORT"].isin(resorts)]
    per = mix.groupby(["RESORT", "CATEGORY"], as_index=False)[["REVENUE", "SALES"]].sum()
    per["SHARE_PCT"] = _pct(per["REVENUE"], per.groupby("RESORT")["REVENUE"].transform("sum"))
    per["CATEGORY"] = per["CATEGORY"].map(lambda c: label(CATEGORY, c))
    per["ORDER"] = per["RESORT"].map({r: i for i, r in enumerate(resorts)})
    per = per.sort_values(["ORDER", "CATEGORY"], ignore_index=True)
    return per.drop(columns=["ORDER"])


_NAMES = {"CUSTOMER_TYPE": CUSTOMER_TYPE, "PAYMENT_METHOD": PAYMENT_METHOD, "CATEGORY": CATEGORY}


def share(mix: pd.DataFrame, key: str) -> pd.DataFrame:
    """Sales and revenue per value of ``key`` (``CUSTOMER_TYPE``, ``PAYMENT_METHOD``,
    ``CATEGORY``): ``CODE``, ``NAME`` (readable), ``SALES``, ``REVENUE``, ``SALES_PCT``,
    most sales first."""
    mix = summable(mix)
    per = mix.groupby(key, as_index=False)[["SALES", "REVENUE"]].sum()
    per = per.rename(columns={key: "CODE"})
    per.insert(1, "NAME", per["CODE"].map(lambda c: label(_NAMES[key], c)))
    per["SALES_PCT"] = _pct(per["SALES"], per["SALES"].sum())
    return per.sort_values(["SALES", "NAME"], ascending=[False, True], ignore_index=True)
