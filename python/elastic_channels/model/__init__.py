"""The resort point-of-sale model: the single source of truth.

- ``schema``: a sale's fields and their Snowflake types, the generator's input
  limits, the names of the Snowflake objects;
- ``profiles``: the 42 resorts and their sales profiles, categories, items, prices,
  customer types and payment mixes;
- ``table``: the resolved table both generators replay, and its fingerprint.

``codegen/generate_tables.py`` imports this package and bakes ``table`` into
``src/tables.rs``; the native generator only replays it.
"""

from .profiles import (
    CATEGORIES,
    CATEGORY_MIXES,
    CUSTOMER_TYPES,
    ITEMS,
    PAYMENT_METHODS,
    PAYMENT_MIX,
    PRICE_TIERS,
    QUANTITIES,
    RESORTS,
    Resort,
)
from .schema import (
    COLUMNS,
    MAX_BATCH_ROWS,
    MAX_RUN_ID_CHARS,
    MAX_SALE_TIME_US,
    MAX_SEQ,
    MAX_WORKER_ID,
    METRICS_TABLE_NAME,
    MIN_SALE_TIME_US,
    PIPE_NAME,
    TABLE_NAME,
    TXID_SEPARATOR,
    ResortSale,
)
from .table import ROW_FIELDS, TABLE, TABLE_LENGTH, WORKER_STRIDE, table_fingerprint

__all__ = [
    "CATEGORIES",
    "CATEGORY_MIXES",
    "COLUMNS",
    "CUSTOMER_TYPES",
    "ITEMS",
    "MAX_BATCH_ROWS",
    "MAX_RUN_ID_CHARS",
    "MAX_SALE_TIME_US",
    "MAX_SEQ",
    "MAX_WORKER_ID",
    "METRICS_TABLE_NAME",
    "MIN_SALE_TIME_US",
    "PAYMENT_METHODS",
    "PAYMENT_MIX",
    "PIPE_NAME",
    "PRICE_TIERS",
    "QUANTITIES",
    "RESORTS",
    "ROW_FIELDS",
    "TABLE",
    "TABLE_LENGTH",
    "TABLE_NAME",
    "TXID_SEPARATOR",
    "WORKER_STRIDE",
    "Resort",
    "ResortSale",
    "table_fingerprint",
]
