"""The table's storage: one Store interface; the Parquet-files and Iceberg stores as
siblings, each with its compactor."""
