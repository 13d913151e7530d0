"""The fleet: local worker processes (``elastic-channels run``), what landed, reports.

- ``run``: the command; ``local``: start and follow worker processes;
- ``verify``: landed, duplicate and lost rows; ``report``: fleet windows and tables;
- ``chart``: the PNG of a run.
"""
