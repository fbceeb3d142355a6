"""What the queue model (``simulator.model.queue``) predicts for a run of ``benchmarks.spark_e2e``.

The model gets what the real run had: the same rate, one value per second; the executors'
capacity (the calibrated rows/s); the bounds and the starting count; the latency target as
its SLA; and the measured actuation delay, the seconds from asking for an executor to the end
of its first task (registration, then its Python worker's start). Its ``pause``, the seconds a
scaling operation stops the whole stage, is 0: adding or removing an executor does not stop
a Structured Streaming query (a removed executor's tasks run again elsewhere).

steadyscale runs in the model as it runs on Spark: the default Scaler (``ScalerPolicy`` with
no filter), told the backlog, the running count and the processed rate, deciding once per
micro-batch. A batch starts when the one before ends, a trigger at least, and reads what
waits, up to the most a batch reads (``batch``), so a query that falls behind reports fewer,
longer batches: the model's stage does too (``QueueConfig.batch``). A fixed count is ``Hold``.
"""

from __future__ import annotations

from typing import Any

from benchmarks.compare_knobs import Hold
from benchmarks.e2e.workload import Schedule
from scaling.baselines import Policy
from scaling.baselines.steadyscale import ScalerPolicy
from simulator.model.queue import QueueConfig, run_queue


def model_policy(
    policy: str, capacity: float, executors: int, latency: float, count: int, interval: float
) -> Policy:
    """The model's stand-in for ``policy``: steadyscale's default Scaler, or ``count`` held."""
    if policy == "steadyscale":
        return ScalerPolicy(
            filter=None,
            capacity=capacity,
            min_operators=1,
            max_operators=executors,
            latency=latency,
            interval=interval,
            reported=True,
        )
    return Hold(count)


def predict(
    policy: Policy,
    schedule: Schedule,
    *,
    capacity: float,
    executors: int,
    initial: int,
    delay: float,
    latency: float,
    batch: float | None = None,
) -> dict[str, Any]:
    """Predicted executor-seconds, late seconds and operations of one run, and its timeline
    (``batch``: the most rows a micro-batch reads; ``None``: a decision every interval)."""
    config = QueueConfig(
        capacity=capacity,
        pause=0.0,
        delay=delay,
        sla=latency,
        min_operators=1,
        max_operators=executors,
        batch=batch,
    )
    result = run_queue(policy, schedule.per_second(), config=config, operators=initial)
    metrics = result.metrics
    return {
        "predicted_executor_seconds": metrics["operator_seconds"],
        "predicted_late_seconds": metrics["sla_seconds"],
        "predicted_operations": int(metrics["s_up"] + metrics["s_down"]),
        "timeline": result.timeline,
    }
