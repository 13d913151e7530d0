"""``elastic-channels dashboard``: a Streamlit app that shows a run, live or after it.

Two pages: "Resort sales" (leadership: revenue, mix, the latest sales) over the landed
rows of ``RESORT_SALES``, and "Run" (the engineer: throughput, latency, fleet health)
over the monitor's ``ELASTIC_K8S_METRICS``. Every figure is computed by SQL on the
target, the embedded emulator (``source.EmulatorSource``, through its control query
API while it runs, its data dir once it stopped) or an account (``account.AccountSource``).

- ``settings``: what the app reads from its environment (set by ``cli``);
- ``dialect``: the few SQL spellings that differ between DuckDB and Snowflake;
- ``sales_sql`` / ``metrics_sql``: the queries, as SQL strings aggregated on the target;
- ``source`` / ``account``: the data-access layer (SQL in, a DataFrame out);
- ``app`` and ``pages/``: the Streamlit app; ``sales_page`` / ``run_page`` draw.
"""
