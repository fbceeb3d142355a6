"""A discrete-time fluid queue for one stage: what baselines that look past the volume run on.

The stage runs ``n_i`` instances during step ``i``, the interval ``[t_i, t_i + Δ)`` with
``t_i = start + i Δ`` and ``Δ = step``; each instance processes ``μ = capacity`` tuples/s while
busy. ``λ_i = arrivals[i]`` tuples/s arrive during step ``i``; the simulator treats them as real
load, noise included. Tuples that cannot be processed wait in a backlog ``b`` that nothing
bounds: no tuple is dropped or throttled (the excess waits upstream, like Kafka lag), and
``buffer`` only decides when the stage signals back-pressure. Starting from ``b_0 = 0``::

    paused_i       = seconds of step i lost to a reconfiguration pause, in [0, Δ]
    c_i            = n_i μ (Δ - paused_i) / Δ                 capacity, tuples/s
    processed_i    = min(b_i + λ_i Δ, c_i Δ) / Δ              tuples/s
    b_{i+1}        = b_i + (λ_i - processed_i) Δ              backlog at the step's end, tuples
    utilisation_i  = processed_i / (n_i μ)                    0 when n_i = 0; a pause is idle
    backpressure_i = |{τ in [0, Δ): b(τ) >= buffer}| / Δ,     b(τ) = max(0, b_i + (λ_i - c_i) τ)
    latency_i      = pause_left_{i+1} + b_{i+1} / (max(n_i, 1) μ)     seconds

``b(τ)`` is the path the fluid queue follows within the step at the step's average rates (the
path whose end point and throughput are the two lines above), so back-pressure is the exact
fraction of the step it spends at or above ``buffer``. The latency proxy is the FIFO queueing
delay of a tuple arriving at the end of the step: the rest of the current pause, then the
backlog ahead of it drained at the nominal capacity of the running instances (Little's law,
``W = L / throughput``, with the stage saturated); it leaves out the tuple's own service time
``1/μ``. At least one instance's capacity is used, so a stage scaled to zero gets a finite
latency: the time one instance would need, the soonest any scale-up could drain the backlog.

**Decisions.** At the first step boundary at or after ``start + k · policy.interval`` (k = 1,
2, ...; once per step when the interval is shorter than a step) the policy gets an
``Observation`` of the steps since its previous decision: the mean ``arrival_rate``,
``processed_rate``, ``utilisation`` and ``backpressure`` of those steps, the ``backlog`` at the
boundary, ``backlog_rate`` = (backlog change) / ``period``, ``capacity = μ`` and ``operators``
= the instances running at the boundary. Its answer, clamped to ``[min_operators,
max_operators]``, is the decided target. A micro-batch stage (``QueueConfig.batch``) is decided
for at each batch's end instead: the next boundary is ``max(interval, read / (n μ))`` seconds on
(rounded up to steps), ``read`` the tuples the next batch takes, ``min(max(b, λ̄ · period),
batch)``: what arrived during this batch, or the backlog where the stage is behind.

**Actuation.** A decision that differs from the running count, with none pending, starts an
operation: it takes effect at the start of the first step at or after the decision time plus
``delay`` (the delay is rounded up to whole steps). While it is pending, a decision for another
count re-targets it and leaves its due time alone (the provisioning under way goes on, as a
Kubernetes Deployment's new pods keep starting when its replica count changes again), and
deciding the running count cancels it. So a policy that asks again every interval is not
postponed, and one that changes its mind every interval still lands what it wants when the
delay is up: its indecision is not free. When a target takes effect the running count
jumps to it: one scaling operation, however many instances it adds or removes, and a pause of
``pause`` seconds starts during which the stage processes nothing (an operation during a pause
restarts it). (Until this rule, a decision for another count restarted the delay, and a policy
whose decisions changed every interval never landed one: on a 30 s delay, raw thresholding
held its first count through every run and was the cheapest policy in many cells.)

**Metrics** (``QueueResult.metrics``): ``s_up``, ``s_down``, ``p_over``, ``p_under`` and
``operator_seconds`` exactly as in ``simulator.model.metrics`` (``s_up``/``s_down`` are ints,
the rest floats), where the operators needed at step ``i`` are
``ThresholdPolicy(capacity, min_operators, max_operators).needed(v_i)`` for the reference ``v``:
the ``trend`` when one is given, else the arrivals. Then, as floats: ``backlog_max`` and
``backlog_mean`` (tuples, over the end-of-step backlogs), ``latency_mean`` and ``latency_max``
(seconds, over the steps), ``sla_seconds`` (seconds of the steps whose latency exceeds ``sla``)
and ``paused_seconds`` (capacity-less seconds, a pause that outlasts the run counted up to its
end).

>>> from scaling.baselines import make_policy
>>> policy = make_policy("steadyscale", filter="raw", capacity=50.0)
>>> result = run_queue(policy, np.full(5, 120.0), config=QueueConfig(pause=0.0))
>>> result.timeline["operators"].tolist(), result.timeline["backlog"].tolist()
([1, 3, 3, 3, 3], [70.0, 40.0, 10.0, 0.0, 0.0])
>>> result.metrics["s_up"], result.metrics["p_under"], result.metrics["backlog_max"]
(1, 1.0, 70.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from filters.base import check_number
from scaling.baselines import Observation, Policy
from scaling.policy import ThresholdPolicy
from simulator.model.metrics import provisioning_metrics

# Decision times and the delay are compared in steps; interval / step is rounded (0.3 / 0.1 is
# 2.9999999999999996), and a billionth of a step is far below any meaningful time difference.
_TOLERANCE = 1e-9

# The per-step values the loop records, in the order it records them.
_COLUMNS = (
    "operators",
    "target",
    "paused",
    "processed",
    "backlog",
    "utilisation",
    "backpressure",
    "latency",
)


@dataclass(frozen=True)
class QueueConfig:
    """The stage's settings; integral floats are accepted for the counts and stored as ``int``.

    Attributes
    ----------
    capacity
        Tuples/s one instance processes while busy (> 0); 50, the paper's operator.
    buffer
        Backlog, tuples (> 0), at and above which the stage is in back-pressure. SEEP's input
        queue holds 100,000 tuples (seed 000's bundled config), about 5.4 s of its measured
        18,578 tuples/s per instance; 250 is the same 5 s of one 50 tuples/s instance.
    pause
        Seconds (>= 0) of zero processing after each scaling operation takes effect. 8 s is the
        top of ELYSIUM's measured 5-8 s restart of a stateless Storm topology (seed 001);
        stateful jobs that checkpoint and restore take 30-120 s (seed 002 §5.2), and Flink's
        autoscaler assumes 5 min.
    delay
        Seconds (>= 0) from a decision to its effect (provisioning, deployment).
    sla
        Latency, seconds (>= 0), above which a step counts towards ``sla_seconds``; 10 s is the
        latency bound of the threshold rule and the SLO example of seed 002 (§5.3, §5.4).
    min_operators, max_operators
        Bounds every decision is clamped to; ``max_operators`` is ``None`` for no bound.
    batch
        Most tuples one micro-batch reads (> 0), for a stage that reports once per micro-batch
        (Spark Structured Streaming: ``benchmarks.spark_e2e`` reads at most 5 s of the largest
        count's capacity a batch): a batch starts when the one before ends, no sooner than
        ``policy.interval`` after it (the trigger), reads the tuples waiting then, up to
        ``batch``, and takes them at the running capacity, so a stage that falls behind
        reports, and is decided for, less often. ``None`` (the default): once every
        ``policy.interval`` seconds, whatever the backlog (a broker's lag read on a clock).
    """

    capacity: float = 50.0
    buffer: float = 250.0
    pause: float = 8.0
    delay: float = 0.0
    sla: float = 10.0
    min_operators: int = 1
    max_operators: int | None = None
    batch: float | None = None

    def __post_init__(self) -> None:
        owner = type(self).__name__
        check_number(owner, "capacity", self.capacity, minimum=0, exclusive_minimum=True)
        check_number(owner, "buffer", self.buffer, minimum=0, exclusive_minimum=True)
        check_number(owner, "batch", self.batch, minimum=0, exclusive_minimum=True, nullable=True)
        for name in ("pause", "delay", "sla"):
            check_number(owner, name, getattr(self, name), minimum=0)
        check_number(owner, "min_operators", self.min_operators, minimum=0, integer=True)
        if self.max_operators is not None:
            check_number(
                owner,
                "max_operators",
                self.max_operators,
                minimum=max(self.min_operators, 1),
                integer=True,
            )
            object.__setattr__(self, "max_operators", int(self.max_operators))
        for name in ("capacity", "buffer", "pause", "delay", "sla"):
            object.__setattr__(self, name, float(getattr(self, name)))
        if self.batch is not None:
            object.__setattr__(self, "batch", float(self.batch))
        object.__setattr__(self, "min_operators", int(self.min_operators))


@dataclass(frozen=True)
class QueueResult:
    """What a run did, step by step, and its metrics (see the module docstring).

    ``timeline`` holds equal-length arrays, one entry per step: ``t`` (the step's start,
    seconds), ``arrivals`` and ``processed`` (tuples/s), ``operators`` (running) and ``target``
    (the decided target in force during the step), ``paused`` (seconds of the step lost to a
    pause), ``backlog`` (tuples, at the step's end), ``utilisation`` and ``backpressure``
    (fractions), ``latency`` (seconds, at the step's end) and ``needed`` (operators needed by
    the reference volume).
    """

    timeline: dict[str, np.ndarray]
    metrics: dict[str, float]


def run_queue(
    policy: Policy,
    arrivals: np.ndarray,
    *,
    config: QueueConfig = QueueConfig(),  # noqa: B008 (frozen, so one shared default is safe)
    operators: int = 1,
    trend: np.ndarray | None = None,
    step: float = 1.0,
    start: float = 0.0,
) -> QueueResult:
    """Run ``policy`` on a stage fed ``arrivals`` (tuples/s, one value per ``step`` seconds).

    Parameters
    ----------
    policy
        Any baseline (``scaling.baselines.make_policy``); it keeps its state afterwards.
    arrivals
        Arrival rates, shape ``(n,)`` with ``n >= 1``, finite and >= 0.
    config
        The stage (capacity, buffer, pause, delay, SLA, bounds).
    operators
        Instances running at ``start``, within the bounds.
    trend
        The noise-free volume, shape ``(n,)``: when given, ``p_over``/``p_under`` are measured
        against it instead of against the arrivals.
    step, start
        Seconds per value (> 0) and the time of the first one.
    """
    check_number("run_queue", "step", step, minimum=0, exclusive_minimum=True)
    check_number("run_queue", "start", start)
    check_number(
        "run_queue",
        "operators",
        operators,
        minimum=config.min_operators,
        maximum=config.max_operators,
        integer=True,
    )
    rates = _rates("arrivals", arrivals)
    reference = rates if trend is None else _rates("trend", trend, shape=rates.shape)
    bounds = ThresholdPolicy(config.capacity, config.min_operators, config.max_operators)

    capacity, buffer = config.capacity, config.buffer
    steps_per_decision = max(float(policy.interval) / step, 1.0)
    delay_steps = math.ceil(config.delay / step - _TOLERANCE)
    running = decided = int(operators)
    due = 0  # step at whose start the decided target takes effect
    backlog = pause_left = 0.0
    next_decision = 1  # k of the next decision time, start + k * interval
    since = 0  # first step of the current decision period
    backlog_before = 0.0  # backlog at the previous decision
    sum_arrivals = sum_processed = sum_utilisation = sum_backpressure = 0.0
    rows: list[tuple[float, ...]] = []  # one per step, the values of _COLUMNS
    for i, rate in enumerate(rates.tolist()):
        if running != decided and i >= due:
            running = decided
            pause_left = config.pause
        paused = min(pause_left, step)
        pause_left -= paused
        work = running * capacity * (step - paused)  # tuples the step can process
        inflow = backlog + rate * step
        done = min(inflow, work)
        processed = done / step
        utilisation = processed / (running * capacity) if running else 0.0
        backpressure = _share_at_or_above(backlog, rate - work / step, buffer, step)
        backlog = inflow - done
        latency = pause_left + backlog / (max(running, 1) * capacity)
        rows.append(
            (running, decided, paused, processed, backlog, utilisation, backpressure, latency)
        )
        sum_arrivals += rate
        sum_processed += processed
        sum_utilisation += utilisation
        sum_backpressure += backpressure

        if i + 1 < next_decision * steps_per_decision - _TOLERANCE:
            continue
        count = i + 1 - since
        period = count * step
        observation = Observation(
            t=start + (i + 1) * step,
            period=period,
            operators=running,
            arrival_rate=sum_arrivals / count,
            processed_rate=sum_processed / count,
            capacity=capacity,
            utilisation=sum_utilisation / count,
            backlog=backlog,
            backlog_rate=(backlog - backlog_before) / period,
            backpressure=sum_backpressure / count,
        )
        wanted = policy.decide(observation)
        check_number(type(policy).__name__, "decide()", wanted, integer=True)
        target = bounds.clamp(int(wanted))
        if target != decided:
            if decided == running:  # nothing pending: an operation starts its delay
                due = i + 1 + delay_steps
            decided = target
        if config.batch is None:
            next_decision = math.floor((i + 1 + _TOLERANCE) / steps_per_decision) + 1
        else:  # the next micro-batch's end: what it reads at the running capacity, a trigger on
            # It reads what arrived during this one, or the backlog where the stage is behind.
            read = min(max(backlog, observation.arrival_rate * period), config.batch)
            seconds = max(read / (max(running, 1) * capacity), steps_per_decision * step)
            next_decision = (i + 1 + math.ceil(seconds / step - _TOLERANCE)) / steps_per_decision
        since, backlog_before = i + 1, backlog
        sum_arrivals = sum_processed = sum_utilisation = sum_backpressure = 0.0

    timeline = {"t": start + step * np.arange(rates.size), "arrivals": rates}
    for name, values in zip(_COLUMNS, np.array(rows).T, strict=True):
        timeline[name] = values.astype(int) if name in ("operators", "target") else values
    timeline["needed"] = np.array([bounds.needed(v) for v in reference.tolist()], dtype=int)
    metrics: dict[str, float] = provisioning_metrics(
        timeline["operators"], timeline["needed"], initial=int(operators), step=step
    )
    backlogs, latencies = timeline["backlog"], timeline["latency"]
    metrics |= {
        "backlog_max": float(backlogs.max()),
        "backlog_mean": float(backlogs.mean()),
        "latency_mean": float(latencies.mean()),
        "latency_max": float(latencies.max()),
        "sla_seconds": float(np.count_nonzero(latencies > config.sla) * step),
        "paused_seconds": float(timeline["paused"].sum()),
    }
    return QueueResult(timeline, metrics)


def _share_at_or_above(backlog: float, net: float, buffer: float, step: float) -> float:
    """Fraction of a step during which ``backlog + net * τ`` is at or above ``buffer``.

    The path's clipping at 0 never matters here, since ``buffer > 0``.
    """
    if net == 0.0:
        return 1.0 if backlog >= buffer else 0.0
    crossing = (buffer - backlog) / net / step  # when the path meets the buffer, in steps
    share = 1.0 - crossing if net > 0.0 else crossing
    return min(max(share, 0.0), 1.0)


def _rates(name: str, values: np.ndarray, shape: tuple[int, ...] | None = None) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0 or (shape is not None and array.shape != shape):
        wanted = "non-empty and one-dimensional" if shape is None else f"{shape}, like arrivals"
        raise ValueError(f"{name} has shape {array.shape}; it must be {wanted}")
    bad = np.flatnonzero(~np.isfinite(array) | (array < 0))
    if bad.size:
        index = int(bad[0])
        raise ValueError(
            f"{name}[{index}]={float(array[index])!r} is not allowed: rates must be finite and >= 0"
        )
    return array
