"""The business: 42 resorts with their sales profiles, four product categories with
items and base prices, customer types, payment methods and quantity mixes.

Everything a sale's non-key columns can be is declared here; ``table.py`` resolves it
into the replayed table.
"""

from __future__ import annotations

import msgspec

SEASON_PASS, DAY_TICKET, FOOD_BEV, MERCH = CATEGORIES = (
    "SEASON_PASS",
    "DAY_TICKET",
    "FOOD_BEV",
    "MERCH",
)

#: Items per category with base prices in cents (STANDARD tier).
ITEMS: dict[str, tuple[tuple[str, int], ...]] = {
    SEASON_PASS: (
        ("Season Pass", 89900),
        ("Midweek Pass", 54900),
        ("Youth Pass", 39900),
        ("Senior Pass", 44900),
        ("4-Day Pass", 32900),
    ),
    DAY_TICKET: (
        ("Adult Day", 18900),
        ("Child Day", 9900),
        ("Senior Day", 12900),
        ("Half Day", 11900),
        ("Beginner", 4900),
        ("Adult 3-Day", 49900),
    ),
    FOOD_BEV: (
        ("Coffee", 495),
        ("Cocoa", 550),
        ("Burrito", 1395),
        ("Chili Bowl", 1695),
        ("Burger", 2195),
        ("Beer", 995),
        ("Pizza", 895),
        ("Water", 450),
    ),
    MERCH: (
        ("Beanie", 3400),
        ("Hoodie", 7900),
        ("Gloves", 6500),
        ("Goggles", 14900),
        ("Stickers", 800),
        ("Hand Warmers", 399),
    ),
}

#: Quantity distribution per category: (quantity, weight).
QUANTITIES: dict[str, tuple[tuple[int, int], ...]] = {
    SEASON_PASS: ((1, 85), (2, 12), (4, 3)),
    DAY_TICKET: ((1, 45), (2, 30), (3, 10), (4, 15)),
    FOOD_BEV: ((1, 55), (2, 30), (3, 10), (4, 5)),
    MERCH: ((1, 80), (2, 15), (3, 5)),
}

#: Price tier -> multiplier in percent of the STANDARD price.
PRICE_TIERS: dict[str, int] = {"VALUE": 85, "STANDARD": 100, "PREMIUM": 120, "LUXURY": 145}

PASSHOLDER = "PASSHOLDER"
CUSTOMER_TYPES = (PASSHOLDER, "DAY_GUEST", "LODGING", "STAFF")
#: How non-passholder sales split among the other customer types.
NON_PASSHOLDER_MIX: tuple[tuple[str, int], ...] = (
    ("DAY_GUEST", 62),
    ("LODGING", 33),
    ("STAFF", 5),
)

PAYMENT_METHODS = (
    "CREDIT",
    "DEBIT",
    "MOBILE",
    "CASH",
    "PASS_CHARGE",
    "ROOM_CHARGE",
    "STAFF_ACCT",
)
#: Payment mix depends on who is paying: passholders charge to their pass, lodging
#: guests to their room, employees to their account.
PAYMENT_MIX: dict[str, tuple[tuple[str, int], ...]] = {
    PASSHOLDER: (
        ("PASS_CHARGE", 45),
        ("CREDIT", 30),
        ("MOBILE", 20),
        ("DEBIT", 4),
        ("CASH", 1),
    ),
    "DAY_GUEST": (("CREDIT", 55), ("MOBILE", 20), ("DEBIT", 15), ("CASH", 10)),
    "LODGING": (("ROOM_CHARGE", 50), ("CREDIT", 35), ("MOBILE", 12), ("CASH", 3)),
    "STAFF": (("STAFF_ACCT", 70), ("CREDIT", 20), ("CASH", 10)),
}

#: Category mix archetypes, weights in percent in CATEGORIES order.
CATEGORY_MIXES: dict[str, tuple[int, int, int, int]] = {
    "destination": (8, 30, 42, 20),
    "local": (14, 22, 48, 16),
    "pass_heavy": (20, 15, 47, 18),
    "family": (6, 35, 44, 15),
}


class Resort(msgspec.Struct, frozen=True):
    """A resort and its deterministic sales profile."""

    name: str
    region: str
    volume: int  # relative sales volume
    mix: str  # key into CATEGORY_MIXES
    tier: str  # key into PRICE_TIERS
    passholder_pct: int  # share of sales made by passholders, in percent


def _r(name: str, region: str, volume: int, mix: str, tier: str, passholder_pct: int) -> Resort:
    return Resort(name, region, volume, mix, tier, passholder_pct)


RESORTS: tuple[Resort, ...] = (
    _r("Vail", "CO", 100, "destination", "LUXURY", 55),
    _r("Breckenridge", "CO", 95, "pass_heavy", "PREMIUM", 62),
    _r("Keystone", "CO", 60, "local", "STANDARD", 58),
    _r("Beaver Creek", "CO", 55, "destination", "LUXURY", 45),
    _r("Copper Mountain", "CO", 50, "local", "STANDARD", 52),
    _r("Winter Park", "CO", 58, "local", "STANDARD", 56),
    _r("Steamboat", "CO", 52, "destination", "PREMIUM", 40),
    _r("Telluride", "CO", 30, "destination", "LUXURY", 30),
    _r("Crested Butte", "CO", 25, "family", "PREMIUM", 35),
    _r("Arapahoe Basin", "CO", 28, "pass_heavy", "VALUE", 70),
    _r("Aspen Snowmass", "CO", 70, "destination", "LUXURY", 38),
    _r("Park City", "UT", 90, "destination", "PREMIUM", 50),
    _r("Deer Valley", "UT", 45, "destination", "LUXURY", 33),
    _r("Alta", "UT", 26, "pass_heavy", "STANDARD", 60),
    _r("Snowbird", "UT", 40, "local", "PREMIUM", 48),
    _r("Brighton", "UT", 22, "local", "VALUE", 55),
    _r("Jackson Hole", "WY", 48, "destination", "LUXURY", 36),
    _r("Big Sky", "MT", 50, "destination", "PREMIUM", 34),
    _r("Whitefish Mountain", "MT", 18, "family", "VALUE", 42),
    _r("Sun Valley", "ID", 24, "destination", "LUXURY", 30),
    _r("Schweitzer", "ID", 16, "family", "VALUE", 40),
    _r("Mammoth Mountain", "CA", 75, "pass_heavy", "PREMIUM", 58),
    _r("Palisades Tahoe", "CA", 70, "destination", "PREMIUM", 50),
    _r("Heavenly", "CA", 72, "destination", "PREMIUM", 46),
    _r("Northstar", "CA", 54, "family", "PREMIUM", 44),
    _r("Kirkwood", "CA", 20, "pass_heavy", "STANDARD", 64),
    _r("Mt. Bachelor", "OR", 30, "local", "STANDARD", 50),
    _r("Mt. Hood Meadows", "OR", 27, "local", "STANDARD", 47),
    _r("Crystal Mountain", "WA", 32, "pass_heavy", "STANDARD", 66),
    _r("Stevens Pass", "WA", 29, "pass_heavy", "STANDARD", 63),
    _r("Taos Ski Valley", "NM", 19, "family", "STANDARD", 32),
    _r("Stowe", "VT", 58, "destination", "PREMIUM", 48),
    _r("Killington", "VT", 66, "local", "STANDARD", 54),
    _r("Sugarbush", "VT", 24, "local", "STANDARD", 45),
    _r("Okemo", "VT", 34, "family", "STANDARD", 43),
    _r("Stratton", "VT", 31, "family", "PREMIUM", 41),
    _r("Sunday River", "ME", 36, "family", "STANDARD", 46),
    _r("Sugarloaf", "ME", 26, "local", "STANDARD", 44),
    _r("Loon Mountain", "NH", 23, "family", "VALUE", 39),
    _r("Whistler Blackcomb", "BC", 98, "destination", "LUXURY", 42),
    _r("Revelstoke", "BC", 21, "destination", "PREMIUM", 28),
    _r("Mont Tremblant", "QC", 47, "family", "PREMIUM", 37),
)
