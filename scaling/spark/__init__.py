"""The Spark adaptor: resize the executors of a running Structured Streaming job from decisions.

The one room of ``scaling`` that touches a cluster. Two lines attach it to a job::

    from scaling.spark import autoscale
    listener = autoscale(spark, {"policy": {"capacity": 5000.0, "max_operators": 8}})

* ``listener``: ``ScalingListener`` turns progress events into samples;
* ``attach``: ``autoscale`` wires the adaptor, a decider and the listener to a session;
* ``deciders``: a ``Scaler`` in the driver or a steadyscale service decides;
* ``adaptor``: ``SparkExecutorAdaptor`` asks the cluster manager for executors;
* ``executors``: the ``Executors`` interface and an in-memory one for tests.
"""

from __future__ import annotations

from scaling.spark.adaptor import SparkExecutorAdaptor, UnsupportedCluster, check_resizable
from scaling.spark.attach import autoscale
from scaling.spark.deciders import LocalDecider, RetryLater, Sample, ServiceDecider
from scaling.spark.executors import Executors, InMemoryExecutors
from scaling.spark.listener import ScalingListener

__all__ = [
    "Executors",
    "InMemoryExecutors",
    "LocalDecider",
    "RetryLater",
    "Sample",
    "ScalingListener",
    "ServiceDecider",
    "SparkExecutorAdaptor",
    "UnsupportedCluster",
    "autoscale",
    "check_resizable",
]
