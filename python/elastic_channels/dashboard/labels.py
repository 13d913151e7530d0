"""Readable names for the codes the table holds (the model has codes only): categories,
customer types, payment methods, price tiers and regions. A code without a name here is
shown as itself, title-cased (``tests/dashboard/test_labels.py`` checks every code of
the model has one)."""

from __future__ import annotations

__all__ = ["CATEGORY", "CUSTOMER_TYPE", "PAYMENT_METHOD", "PRICE_TIER", "REGION", "label"]

CATEGORY = {
    "SEASON_PASS": "Season passes",
    "DAY_TICKET": "Day tickets",
    "FOOD_BEV": "Food & beverage",
    "MERCH": "Merchandise",
}
CUSTOMER_TYPE = {
    "PASSHOLDER": "Passholder",
    "DAY_GUEST": "Day guest",
    "LODGING": "Lodging guest",
    "STAFF": "Staff",
}
PAYMENT_METHOD = {
    "CREDIT": "Credit card",
    "DEBIT": "Debit card",
    "MOBILE": "Mobile wallet",
    "CASH": "Cash",
    "PASS_CHARGE": "Charged to pass",
    "ROOM_CHARGE": "Charged to room",
    "STAFF_ACCT": "Staff account",
}
PRICE_TIER = {"VALUE": "Value", "STANDARD": "Standard", "PREMIUM": "Premium", "LUXURY": "Luxury"}
#: State or province code -> name.
REGION = {
    "BC": "British Columbia", "CA": "California", "CO": "Colorado", "ID": "Idaho",
    "ME": "Maine", "MT": "Montana", "NH": "New Hampshire", "NM": "New Mexico",
    "OR": "Oregon", "QC": "Quebec", "UT": "Utah", "VT": "Vermont", "WA": "Washington",
    "WY": "Wyoming",
}  # fmt: skip


def label(names: dict[str, str], code: object) -> str:
    """The readable name of ``code`` in ``names``; an unknown code title-cased."""
    text = str(code)
    return names.get(text) or text.replace("_", " ").title()
