"""A real Spark cluster on this machine for tests: ``local-cluster[workers,cores,memoryMB]``
(``simulator.spark.session.local_cluster``), and a poll that waits for what it starts."""

from __future__ import annotations

from simulator.spark.session import local_cluster, wait_for

__all__ = ["local_cluster", "wait_for"]
