"""Attach steadyscale to a Spark session: the adaptor, the decider and the listener, wired.

Two lines attach it to a job::

    from scaling.spark import autoscale
    listener = autoscale(spark, {"filter": {"name": "tvd"},
                                 "policy": {"capacity": 5000.0, "max_operators": 8}})

The policy's ``capacity`` is the input rows per second one executor handles; its operator
bounds are the executor bounds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import SparkSession

from scaling.scaler import Scaler
from scaling.spark.deciders import Decider, LocalDecider, ServiceDecider
from scaling.spark.listener import ScalingListener

# Seconds an executor operation is planned to stop the query, where a spec does not state
# ``restart``, until the Scaler has measured one: none. Spark adds and removes executors while
# the query runs (a removed executor's tasks are retried elsewhere: one slower micro-batch,
# docs/spark.md). What a job does show (a PySpark executor's first task starts its Python
# worker, and its batch waits 10-40 s: docs/benchmarks.md, issue 31) the Scaler measures from
# the processed rate after the first operation. With the policy's default (20 s, for restarts
# that stop a job), every operation looked 10 s late before any was made, and the executors a
# job started with were held for good (session 20, examples/spark_autoscale.py). Not free:
# on a steep rise it adds executors one stall at a time (docs/benchmarks.md, real executors).
EXECUTOR_RESTART = 0.0


def autoscale(
    spark: SparkSession,
    scaler: Scaler | Mapping[str, Any] | None = None,
    *,
    service: str | None = None,
    stream: str | None = None,
    token: str | None = None,
    min_executors: int = 1,
    max_executors: int | None = None,
    query: str | None = None,
) -> ScalingListener:
    """Attach steadyscale to the streaming queries of ``spark``; returns the listener.

    Local mode: ``scaler`` is a ``Scaler`` or its spec (built starting from the executors
    running now); executor bounds come from its policy's ``min_operators`` / ``max_operators``.
    Remote mode: ``service`` (URL) and ``stream`` (id); ``scaler`` may then be a spec to create
    the stream with; bounds from ``min_executors`` / ``max_executors``. A spec whose policy
    does not state ``restart`` gets ``EXECUTOR_RESTART``; a ``Scaler`` is used as built.
    """
    from scaling.spark.adaptor import SparkExecutorAdaptor

    if isinstance(scaler, Mapping):
        scaler = executor_spec(scaler)
    decider: Decider
    if service is not None:
        if stream is None:
            raise ValueError("stream=None is not allowed with service=...: give the stream's id")
        if isinstance(scaler, Scaler):
            scaler = scaler.spec
        adaptor = SparkExecutorAdaptor(spark, min_executors, max_executors)
        decider = ServiceDecider(service, stream, token, scaler, operators=adaptor.current())
    else:
        if scaler is None:
            raise ValueError("scaler=None is not allowed: give a Scaler or its spec, or service=")
        spec = scaler.spec if isinstance(scaler, Scaler) else scaler
        policy = spec["policy"]
        adaptor = SparkExecutorAdaptor(
            spark, policy.get("min_operators", 1), policy.get("max_operators")
        )
        if not isinstance(scaler, Scaler):
            scaler = Scaler.from_spec(dict(scaler), operators=adaptor.current())
        decider = LocalDecider(scaler)
    listener = ScalingListener(decider, adaptor, query)
    spark.streams.addListener(listener)
    return listener


def executor_spec(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """``spec`` with ``EXECUTOR_RESTART`` as its policy's ``restart`` where it states none
    (anything else is left to ``Scaler.from_spec`` to check).

    >>> executor_spec({"policy": {"capacity": 100.0}})["policy"]
    {'capacity': 100.0, 'restart': 0.0}
    >>> executor_spec({"policy": {"capacity": 100.0, "restart": 30.0}})["policy"]["restart"]
    30.0
    """
    policy = spec.get("policy")
    if not isinstance(policy, Mapping) or "restart" in policy:
        return spec
    return {**spec, "policy": {**policy, "restart": EXECUTOR_RESTART}}
