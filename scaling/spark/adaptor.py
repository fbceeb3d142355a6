"""Resize the executors of a running Spark application: ``SparkExecutorAdaptor``.

Spark has no public API for this; its developer API does it (``SparkContext`` in Scala,
reached through py4j from the classic PySpark driver):

* ``requestTotalExecutors(n, 0, {})`` sets an absolute target; the cluster manager starts
  executors until ``n`` run and replaces lost ones. It never stops a running executor.
* ``killExecutors(ids)`` stops those executors at once and lowers the target by as many, so
  scaling down kills executors first and then pins the target again.

That works on the coarse-grained backends, the standalone master (``spark://``, and
``local-cluster[N,cores,memoryMB]``, a standalone cluster inside one machine), Kubernetes
(``k8s://``) and YARN. It cannot work

* in local mode (``local``, ``local[*]``): tasks run inside the driver, there are no executors;
* with dynamic allocation on: Spark's own manager overrides every target and
  ``killExecutors`` refuses to run;
* from a Spark Connect client: it has no SparkContext.

The adaptor refuses these when it is built, with a message that says what to change
(``UnsupportedCluster``). Facts measured on PySpark 4.3.0: research/autoscalers.md §3.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from pyspark.sql import SparkSession

from filters.base import check_number
from scaling.spark.executors import check_bounds, clamp

logger = logging.getLogger(__name__)

# Settings that hand the executor count to Spark itself.
DYNAMIC_ALLOCATION_KEYS = (
    "spark.dynamicAllocation.enabled",
    "spark.streaming.dynamicAllocation.enabled",
)


class UnsupportedCluster(ValueError):
    """The Spark application's executors cannot be resized from outside; the message says why."""


def check_resizable(master: str, conf: Mapping[str, str | None]) -> None:
    """Raise ``UnsupportedCluster`` unless an application on ``master`` with ``conf`` is resizable.

    >>> check_resizable("spark://head:7077", {"spark.dynamicAllocation.enabled": "false"})
    >>> check_resizable("local[*]", {})
    Traceback (most recent call last):
    ...
    scaling.spark.adaptor.UnsupportedCluster: master='local[*]' cannot be resized: local mode ...
    """
    if master == "local" or master.startswith("local["):
        raise UnsupportedCluster(
            f"master={master!r} cannot be resized: local mode runs every task inside the driver "
            "JVM and has no executors to add or remove. Run on a cluster manager "
            "(spark://host:7077, k8s://https://host:443, yarn) or, on one machine, "
            "local-cluster[executors,cores,memoryMB]"
        )
    for key in DYNAMIC_ALLOCATION_KEYS:
        value = conf.get(key)
        if value is not None and value.strip().lower() == "true":
            raise UnsupportedCluster(
                f"{key}={value} is not allowed: Spark's dynamic allocation then decides the "
                "number of executors itself, overrides every target and refuses killExecutors(). "
                f"Set {key}=false (the default) to let steadyscale decide"
            )


class SparkExecutorAdaptor:
    """The executors of the application behind ``spark``, resized to absolute targets.

    Implements ``scaling.spark.executors.Executors``. Scaling down kills the executors with the
    highest ids (the youngest, which hold the least cached and shuffle data of a long-running
    job) and pins the target; scaling up asks for the total and returns before the executors
    run (seconds on a standalone cluster, the time to schedule a pod on Kubernetes).

    On standalone clusters set ``spark.executor.cores``: without it one executor takes every
    core of a worker, and targets above the number of workers can never be met (SPARK-30299).

    Parameters
    ----------
    spark
        A classic (not Spark Connect) session whose driver runs in this process.
    min_executors, max_executors
        Bounds every target is brought into (``max_executors=None``: no maximum).

    Raises ``UnsupportedCluster`` in local mode, with dynamic allocation on, or on Spark Connect.
    """

    def __init__(
        self, spark: SparkSession, min_executors: int = 1, max_executors: int | None = None
    ) -> None:
        check_bounds("SparkExecutorAdaptor", min_executors, max_executors)
        try:
            context = spark.sparkContext
            jvm = context._jvm
        except Exception as error:  # Spark Connect raises its own error types
            raise UnsupportedCluster(
                f"this session has no SparkContext ({type(error).__name__}): Spark Connect "
                "clients cannot resize executors. Attach the adaptor in the driver of a classic "
                "session (pyspark, not pyspark-client / spark.remote)"
            ) from None
        conf, master = context.getConf(), str(context.master)
        check_resizable(master, {key: conf.get(key) for key in DYNAMIC_ALLOCATION_KEYS})
        if master.startswith("spark://") and conf.get("spark.executor.cores") is None:
            logger.warning(
                "spark.executor.cores is not set: on a standalone cluster one executor takes a "
                "whole worker, so at most one executor per worker can run"
            )
        self.min_executors = int(min_executors)
        self.max_executors = None if max_executors is None else int(max_executors)
        self._scala_context: Any = context._jsc.sc()
        self._jvm: Any = jvm
        self._removing: set[str] = set()
        self._lock = threading.Lock()

    def executor_ids(self) -> list[str]:
        """Ids of the running executors that are not being removed, oldest first."""
        listed = self._jvm.scala.jdk.javaapi.CollectionConverters.asJava(
            self._scala_context.getExecutorIds()
        )
        ids = [str(executor) for executor in listed]
        with self._lock:
            self._removing &= set(ids)  # those that are gone are no longer being removed
            live = [executor for executor in ids if executor not in self._removing]
        return sorted(live, key=lambda executor: (len(executor), executor))

    def current(self) -> int:
        return len(self.executor_ids())

    def resize(self, executors: int) -> int:
        check_number("SparkExecutorAdaptor", "executors", executors, minimum=0, integer=True)
        target = clamp(int(executors), self.min_executors, self.max_executors)
        live = self.executor_ids()
        if target < len(live):
            victims = live[target:]
            with self._lock:
                self._removing.update(victims)
            seq = self._jvm.PythonUtils.toSeq(self._jvm.java.util.ArrayList(victims))
            if not self._scala_context.killExecutors(seq):
                raise RuntimeError(f"the cluster manager refused to remove executors {victims}")
            logger.info("removing executors %s", victims)
        no_locality = self._jvm.PythonUtils.toScalaMap(self._jvm.java.util.HashMap())
        if not self._scala_context.requestTotalExecutors(target, 0, no_locality):
            raise RuntimeError(f"the cluster manager refused a target of {target} executors")
        return target
