"""The rules of the Flink Kubernetes operator's autoscaler for one job vertex, as pure functions.

Read from release 1.15.0 of ``apache/flink-kubernetes-operator`` (module ``flink-autoscaler``,
commit 79d730b): ``JobVertexScaler`` (target parallelism, limits, key-group alignment,
ineffective scale-ups, delayed scale-down), ``AutoScalerUtils`` (target capacity, observed
scalability), ``ScalingMetricEvaluator.computeProcessingRateThresholds`` (the utilisation dead
band), ``DelayedScaleDown`` and ``ScalingExecutor.computeScalingSummary`` (a job scales only if
some vertex is outside its dead band). ``scaling.baselines.flink.FlinkPolicy`` feeds them from
the queue model; ``tests/scaling/baselines/test_flink.py`` holds Flink's own tests of them.

Rates are records/s of the whole vertex (all its subtasks), times are seconds. ``options`` is
anything with Flink's settings under their snake-case names (a ``FlinkPolicy``).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from typing import Protocol

# scaling.key-group.partitions.adjust.mode (KeyGroupOrPartitionsAdjustMode), default first.
ADJUST_MODES = ("evenly_spread", "maximize_utilisation")
_INT_MAX = 2**31 - 1  # Java's Integer.MAX_VALUE, where scale() caps a parallelism


class FlinkOptions(Protocol):
    """The settings the rules read (``AutoScalerOptions``, snake case; see ``FlinkPolicy``)."""

    utilization_target: float
    target_utilization_boundary: float
    utilization_max: float | None
    utilization_min: float | None
    catch_up_duration: float
    scale_up_max_factor: float
    scale_down_max_factor: float
    scale_down_interval: float
    vertex_min_parallelism: int
    vertex_max_parallelism: int
    scaling_effectiveness_detection_enabled: bool
    scaling_effectiveness_threshold: float
    scaling_key_group_partitions_adjust_mode: str
    observed_scalability_enabled: bool
    observed_scalability_min_observations: int
    observed_scalability_coefficient_min: float


@dataclass(frozen=True)
class Evaluated:
    """What ``ScalingMetricEvaluator`` hands the vertex scaler: averages over the metric window.

    ``max_parallelism`` is the vertex's key groups (``pipeline.max-parallelism``);
    ``num_source_partitions`` > 0 for a source that knows its partitions; ``hash_input`` when
    an input edge is a keyBy. The two thresholds are the dead band's edges in records/s.
    """

    parallelism: int
    target_data_rate: float
    true_processing_rate: float
    catch_up_data_rate: float
    scale_up_threshold: float
    scale_down_threshold: float
    max_parallelism: int = 720
    num_source_partitions: int = 0
    hash_input: bool = False


@dataclass(frozen=True)
class Change:
    """``ParallelismChange``: ``new == current`` is no change (and never outside the band).

    ``expected_rate`` is the ``EXPECTED_PROCESSING_RATE`` recorded for a change, not compared.
    """

    current: int
    new: int
    outside_bound: bool = False
    expected_rate: float = field(default=math.nan, compare=False)

    @property
    def no_change(self) -> bool:
        return self.new == self.current


@dataclass(frozen=True)
class Summary:
    """``ScalingSummary``: one applied change and the rates it was decided on."""

    current: int
    new: int
    true_processing_rate: float
    expected_rate: float

    @property
    def scaled_up(self) -> bool:
        return self.new > self.current


class DelayedScaleDown:
    """Scale-downs waiting out ``scale-down.interval``, per vertex (``DelayedScaleDown``).

    Per vertex: the time the first scale-down was asked for, and the recommendations since,
    kept monotonically decreasing (a later, higher one makes the lower ones irrelevant to the
    window's maximum), each as ``(t, parallelism, outside_bound)``.
    """

    def __init__(self) -> None:
        self.vertices: dict[str, tuple[float, deque[tuple[float, int, bool]]]] = {}

    def trigger(self, vertex: str, now: float, parallelism: int, outside: bool) -> float:
        """Record a recommendation; the time this vertex's first scale-down was triggered."""
        first, recommended = self.vertices.setdefault(vertex, (now, deque()))
        while recommended and recommended[-1][1] <= parallelism:
            recommended.pop()
        recommended.append((now, parallelism, outside))
        return first

    def max_recommended(self, vertex: str, window_start: float) -> tuple[int, bool]:
        """The highest recommendation at or after ``window_start``, and its band flag."""
        recommended = self.vertices[vertex][1]
        while recommended and recommended[0][0] < window_start:
            recommended.popleft()
        _, parallelism, outside = recommended[0]
        return parallelism, outside

    def clear(self, vertex: str | None = None) -> None:
        """Forget one vertex's requests, or all of them (after a rescale)."""
        if vertex is None:
            self.vertices.clear()
        else:
            self.vertices.pop(vertex, None)


def target_capacity(
    target_rate: float,
    catch_up_rate: float,
    utilization: float,
    catch_up_duration: float,
    restart_time: float | None,
) -> float:
    """Records/s to provision (``AutoScalerUtils.getTargetProcessingCapacity``), rounded.

    .. math:: \\text{lag}/T_c + \\lambda\\, T_r / T_c + \\lambda / u

    with the ``catch_up_rate`` = lag / :math:`T_c`, :math:`\\lambda` the target data rate,
    :math:`T_r` = ``restart_time`` (``None``: left out, as for the scale-up threshold),
    :math:`T_c` = ``catch_up_duration`` (0: no catch-up terms) and :math:`u` clamped to
    [0, 1] (0: infinite). NaN in, NaN out.
    """
    if math.isnan(catch_up_rate) or math.isnan(target_rate):
        return math.nan
    utilization = min(max(utilization, 0.0), 1.0)
    if utilization == 0.0:
        return math.inf
    restart = 0.0
    if restart_time is not None and catch_up_duration != 0:
        restart = target_rate * restart_time / catch_up_duration
    return math.floor(catch_up_rate + restart + target_rate / utilization + 0.5)  # Math.round


def evaluate(
    options: FlinkOptions,
    parallelism: int,
    target_rate: float,
    true_processing_rate: float,
    *,
    catch_up_rate: float = 0.0,
    backlog: bool = False,
    restart_time: float,
    max_parallelism: int = 720,
    num_source_partitions: int = 0,
    hash_input: bool = False,
) -> Evaluated:
    """``Evaluated`` with the dead band of ``computeProcessingRateThresholds``.

    The band is the target capacity at utilisation ``utilization_max`` (default target +
    boundary; no restart term) and at ``utilization_min`` (default target - boundary). While
    the job processes a ``backlog`` they are 1 and 0: full utilisation, and no scale-down.
    """
    if backlog:
        upper, lower = 1.0, 0.0
    else:
        target, boundary = options.utilization_target, options.target_utilization_boundary
        upper = target + boundary if options.utilization_max is None else options.utilization_max
        lower = target - boundary if options.utilization_min is None else options.utilization_min
    catch_up = options.catch_up_duration
    return Evaluated(
        parallelism,
        target_rate,
        true_processing_rate,
        catch_up_rate,
        scale_up_threshold=target_capacity(target_rate, catch_up_rate, upper, catch_up, None),
        scale_down_threshold=target_capacity(
            target_rate, catch_up_rate, lower, catch_up, restart_time
        ),
        max_parallelism=max_parallelism,
        num_source_partitions=num_source_partitions,
        hash_input=hash_input,
    )


def compute_scale_target_parallelism(
    options: FlinkOptions,
    evaluated: Evaluated,
    history: Sequence[Summary],
    restart_time: float,
    delayed: DelayedScaleDown,
    now: float,
    vertex: str = "stage",
) -> Change:
    """``JobVertexScaler.computeScaleTargetParallelism``: the vertex's next parallelism.

    Scale factor = target capacity (at the utilisation target, restart included) / true
    processing rate, divided by the observed scalability coefficient when enabled, capped to
    ``[1 - scale_down_max_factor, 1 + scale_up_max_factor]``; then ``scale``; then a scale-up
    is blocked after an ineffective one, and a scale-down waits out ``scale_down_interval``
    and takes the highest recommendation of that interval.
    """
    current, true_rate = evaluated.parallelism, evaluated.true_processing_rate
    if math.isnan(true_rate):
        return Change(current, current)
    wanted = target_capacity(
        evaluated.target_data_rate,
        evaluated.catch_up_data_rate,
        options.utilization_target,
        options.catch_up_duration,
        restart_time,
    )
    if math.isnan(wanted):
        return Change(current, current)
    factor = wanted / true_rate
    if options.observed_scalability_enabled:
        factor /= observed_scaling_coefficient(history, options)
    factor = min(max(factor, 1 - options.scale_down_max_factor), 1 + options.scale_up_max_factor)
    new = scale(
        current,
        factor,
        max_parallelism=evaluated.max_parallelism,
        lower=min(current, options.vertex_min_parallelism),
        upper=max(current, options.vertex_max_parallelism),
        num_source_partitions=evaluated.num_source_partitions,
        hash_input=evaluated.hash_input,
        mode=options.scaling_key_group_partitions_adjust_mode,
    )
    if new == current:
        delayed.clear(vertex)
        return Change(current, current)
    outside = not (evaluated.scale_up_threshold <= true_rate <= evaluated.scale_down_threshold)
    expected = true_rate * factor  # the capped target capacity
    if new > current:
        delayed.clear(vertex)
        last = history[-1] if history else None
        if (
            last is not None
            and current == last.new
            and last.scaled_up
            and ineffective(last, true_rate, options.scaling_effectiveness_threshold)
            and options.scaling_effectiveness_detection_enabled
        ):
            return Change(current, current)
        return Change(current, new, outside, expected)
    if options.scale_down_interval <= 0:
        return Change(current, new, outside, expected)
    first = delayed.trigger(vertex, now, new, outside)
    window_start = now - options.scale_down_interval
    if window_start < first:
        return Change(current, current)
    highest, highest_outside = delayed.max_recommended(vertex, window_start)
    if highest == current:
        return Change(current, current)
    return Change(current, highest, highest_outside, expected)


def ineffective(last: Summary, true_rate: float, threshold: float) -> bool:
    """Did the last scale-up deliver less than ``threshold`` of the increase it expected?"""
    expected_increase = last.expected_rate - last.true_processing_rate
    actual_increase = true_rate - last.true_processing_rate
    with_zero = expected_increase == 0  # Java's x / 0.0 is +-inf or NaN, never an error
    ratio = math.nan if with_zero else actual_increase / expected_increase
    if with_zero and actual_increase != 0:
        ratio = math.copysign(math.inf, actual_increase)
    return not ratio >= threshold


def scale(
    current: int,
    factor: float,
    *,
    max_parallelism: int,
    lower: int,
    upper: int,
    num_source_partitions: int = 0,
    hash_input: bool = False,
    mode: str = "evenly_spread",
) -> int:
    """``JobVertexScaler.scale``: ``ceil(factor × current)`` within the limits, aligned.

    The limits are ``[lower, min(upper, max_parallelism)]``. A source that knows its
    partitions, or a vertex behind a keyBy, is then aligned to its partitions or key groups
    :math:`K`: the first :math:`p` upward (up to the current parallelism when scaling down)
    that divides :math:`K` (``evenly_spread``), or that reads fewer groups per subtask
    (``maximize_utilisation``); else the smallest :math:`p` downward with as many groups per
    subtask, but never a :math:`p` that reverses the scaling direction.

    Raises ``ValueError`` when ``lower > upper``.
    """
    if lower > upper:
        raise ValueError(f"the parallelism lower limit {lower} is above the upper limit {upper}")
    bound = min(max_parallelism, upper)
    raw = factor * current
    # Java casts ceil(raw), capped at Integer.MAX_VALUE, to int: NaN becomes 0.
    raw_parallelism = 0 if math.isnan(raw) else min(math.ceil(min(raw, _INT_MAX)), _INT_MAX)
    new = min(max(lower, raw_parallelism), bound)
    if not (num_source_partitions > 0 or hash_input) or new == current:
        return new
    groups = max_parallelism if num_source_partitions <= 0 else num_source_partitions
    up = new > current
    search_to = min(groups, bound) if up else min(current, groups, bound)
    for p in range(new, search_to + 1):
        if groups % p == 0 or (mode == "maximize_utilisation" and groups // p < groups // new):
            return p
    p = new
    while p > 0:
        if groups // p > groups // new:
            if groups % p != 0:
                p += 1
            break
        p -= 1
    p = max(p, lower)
    if (up and p <= current) or (not up and p >= current):
        return current
    return p


def observed_scaling_coefficient(history: Sequence[Summary], options: FlinkOptions) -> float:
    """``calculateObservedScalingCoefficient``: how far throughput grows with parallelism.

    Least squares of :math:`R_i = \\beta\\, \\alpha\\, P_i` over the history's parallelisms
    :math:`P_i` and true processing rates :math:`R_i`, :math:`\\beta` the rate per subtask at
    the smallest parallelism (the latest at 1, when there is one):
    :math:`\\alpha = \\sum P_i R_i / (\\beta \\sum P_i^2)`, clamped to
    ``[observed_scalability_coefficient_min, 1]`` and rounded up to two decimals; 1 with
    fewer than ``observed_scalability_min_observations`` summaries.
    """
    if not history or len(history) < options.observed_scalability_min_observations:
        return 1.0
    smallest: Summary | None = None
    for summary in reversed(history):
        if summary.current == 1:
            smallest = summary
            break
        if smallest is None or summary.current < smallest.current:
            smallest = summary
    assert smallest is not None
    baseline = smallest.true_processing_rate / smallest.current
    rates = [summary.true_processing_rate for summary in history]
    if math.isnan(baseline) or any(math.isnan(rate) for rate in rates):
        return 1.0
    squares = sum(summary.current**2 for summary in history)
    products = sum(summary.current * rate for summary, rate in zip(history, rates, strict=True))
    alpha = 1.0 if squares == 0 else products / (squares * baseline)
    alpha = max(options.observed_scalability_coefficient_min, min(1.0, alpha))
    return float(Decimal(repr(alpha)).quantize(Decimal("0.01"), rounding=ROUND_CEILING))


def job_scaling_summary(changes: Mapping[str, Change]) -> dict[str, Change]:
    """``ScalingExecutor.computeScalingSummary``: the changes to apply, by vertex.

    The vertices that change, but only if one of them is outside its dead band: while every
    vertex is within it, the job is not touched.
    """
    changing = {vertex: change for vertex, change in changes.items() if not change.no_change}
    if not any(change.outside_bound for change in changing.values()):
        return {}
    return changing
