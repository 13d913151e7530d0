"""The worker: paced rows -> one elastic channel, metered, at-least-once.

- ``settings``: every setting once (flag, variable, default, help);
- ``config``: ``WorkerConfig`` from flags, environment and a profile;
- ``source``: the batches (backend, sizing, deterministic replay);
- ``ledger``: batches sent and not yet acked;
- ``channel``: the elastic channel, opened, found dead and replaced;
- ``acks``: answers from the SDK's thread; ``meter``: windows and totals;
- ``pacing``: the rate; ``loop``: the run; ``worker``: the ``Worker`` tying them up.
"""
