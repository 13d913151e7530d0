"""``elastic-channels dashboard``: a Streamlit app that shows a run, live or after it.

The pages follow the workload (``--workload``): "Resort sales" (leadership: revenue,
mix, the latest sales of the synthetic sales) over the landed rows of ``RESORT_SALES``
for the resort-sales workload, or "Latest rows" (a run's row count, its newest rows,
ingest-to-visible) over any other workload's table; and "Run" (the engineer:
throughput, latency, fleet health, rows landed) over the monitor's
``ELASTIC_K8S_METRICS``. Every figure is computed by SQL on the target, the embedded
emulator (``source.EmulatorSource``, through its control query API while it runs, its
data dir once it stopped) or an account (``account.AccountSource``).

- ``settings``: what the app reads from its environment (set by ``cli``);
- ``landing``: the workload's landing table (its columns, run-id, unique-id and
  send-time columns), names quoted as identifiers; ``data_dirs``: which data dir
  ``run`` wrote it to last, when none is given;
- ``statement``: a query and its bound values (no value is written into SQL text);
- ``dialect``: the few SQL spellings that differ between DuckDB and Snowflake;
- ``sales_sql`` / ``rows_sql`` / ``metrics_sql`` (``worker_sql``, ``metrics_columns``):
  the queries, aggregated on the target; ``aggregate`` / ``running_aggregate``: sums
  kept across refreshes, so a refresh during a run reads only what landed since the
  last one;
- ``source`` / ``account``: the data-access layer (a statement in, a DataFrame out);
- ``sales_figures``, ``labels``: the sales breakdowns and the names shown for codes;
- ``charts``: the Altair charts (UTC times, money as money);
- ``refresh``, ``run_progress``: refresh while the run goes on, stop once it is over;
- ``app`` and ``pages/``: the Streamlit app; ``sales_page`` / ``rows_page``
  (``rows_table``) / ``run_page`` (``run_landed``) draw;
- ``asgi`` / ``loopback``: what ``cli`` serves: the app behind a check that answers
  only requests addressed to the dashboard's own loopback address and port.
"""
