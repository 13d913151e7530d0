"""Every code the model can put in a sale has a readable name on the page."""

from __future__ import annotations

from elastic_channels.dashboard import labels
from elastic_channels.model import CATEGORIES, PAYMENT_METHODS, PRICE_TIERS, RESORTS
from elastic_channels.model.profiles import CUSTOMER_TYPES


def test_every_code_of_the_model_has_a_name() -> None:
    for codes, names in (
        (CATEGORIES, labels.CATEGORY), (CUSTOMER_TYPES, labels.CUSTOMER_TYPE),
        (PAYMENT_METHODS, labels.PAYMENT_METHOD), (PRICE_TIERS, labels.PRICE_TIER),
        ({r.region for r in RESORTS}, labels.REGION),
    ):  # fmt: skip
        assert set(codes) <= set(names), set(codes) - set(names)
        assert all(names[c] != c for c in codes if "_" in c)  # not the raw code


def test_an_unknown_code_reads_as_words() -> None:
    assert labels.label(labels.PAYMENT_METHOD, "GIFT_CARD") == "Gift Card"
    assert labels.label(labels.PAYMENT_METHOD, "PASS_CHARGE") == "Charged to pass"
