"""The Flink Kubernetes operator's autoscaler as a baseline policy (release 1.15.0)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from filters.base import Configurable, check_choice, check_number, reject
from scaling.baselines.flink_rules import (
    ADJUST_MODES,
    DelayedScaleDown,
    Summary,
    compute_scale_target_parallelism,
    evaluate,
    job_scaling_summary,
)
from scaling.baselines.observation import Observation

_VERTEX = "stage"  # the one vertex of the simulated job
# The settings that are durations, in seconds: what scaling Flink's time constants scales.
TIME_SETTINGS = (
    "metrics_window",
    "stabilization_interval",
    "catch_up_duration",
    "restart_time",
    "restart_time_tracking_limit",
    "scale_down_interval",
    "backlog_processing_lag_threshold",
    "history_max_age",
    "interval",
)


@dataclass(frozen=True)
class _Sample:
    """One metric collection: cumulative records processed, lag and busy fraction at ``t``."""

    t: float
    processed: float
    lag: float
    busy: float


class FlinkPolicy(Configurable):
    """Flink's job autoscaler (flink-kubernetes-operator 1.15.0) on one source vertex.

    Each ``interval`` (the operator's reconcile interval) it collects the vertex's metrics;
    once ``stabilization_interval`` has passed since the job last started RUNNING and a full
    ``metrics_window`` has been collected after it, it evaluates the window and decides
    (``scaling.baselines.flink_rules``): with :math:`\\lambda` the target data rate,
    :math:`\\rho` the true processing rate of all subtasks, :math:`L` the lag,
    :math:`T_c` = ``catch_up_duration``, :math:`T_r` the restart time and :math:`u` =
    ``utilization_target``, the parallelism becomes

    .. math:: \\left\\lceil p \\cdot \\frac{\\text{round}(L/T_c + \\lambda T_r/T_c
              + \\lambda/u)}{\\rho} \\right\\rceil

    with the factor capped by ``scale_up_max_factor`` / ``scale_down_max_factor``, within
    ``[vertex_min_parallelism, min(vertex_max_parallelism, pipeline_max_parallelism)]`` and
    aligned to the partitions or key groups when the vertex has them; it is applied only if
    :math:`\\rho` lies outside the dead band ``utilization_target ±
    target_utilization_boundary`` (as capacities), a scale-down only after
    ``scale_down_interval`` (the highest recommendation of that interval), a scale-up not after
    an ineffective one (when ``scaling_effectiveness_detection_enabled``). Lag above
    ``backlog_processing_lag_threshold`` seconds of input widens the band to [0, 1]
    utilisation: no scale-down while a backlog is processed. A scaling restarts the job: the
    metrics are cleared, and the policy asks for its target until the stage runs at it.

    **What Flink sees, from the ``Observation``.** The stage is a source vertex (the only kind
    whose lag Flink reads). Per collection: records in = ``processed_rate × period`` summed
    (``numRecordsIn``), lag = ``backlog`` (``pendingRecords``), busy time = ``utilisation``
    (every subtask equally busy, so Flink's default MAX aggregator is the mean). Over the
    window, as Flink computes them: input rate = records in / time; target data rate = input
    rate + lag growth rate (which is the arrival rate); true processing rate = input rate /
    busy fraction (:math:`p\\mu` exactly, the model's instances being identical); no input:
    infinite. Stand-ins: the job is RUNNING again from the start of the first period, at the
    new count, in which it processed anything or had no backlog (the model pauses all
    processing while it restarts); a restart's tracked duration runs from the decision to
    then. Left out: Flink's observed-TPR fallback (for busy time that misreports; the model's
    is exact), memory tuning and pressure, quotas, excluded periods, events.

    Parameters
    ----------
    utilization_target, target_utilization_boundary
        0.7 in (0, 1] and 0.3 in [0, 1]; the boundary may exceed the target only when
        ``utilization_min`` is given (Flink would silently take 0).
    utilization_max, utilization_min
        ``None`` (target ± boundary) or an explicit band, min <= target <= max.
    metrics_window, stabilization_interval
        900 s (> 0) and 300 s (>= 0).
    catch_up_duration, restart_time
        1800 s and 300 s (>= 0; a catch-up of 0 disables the lag terms).
    restart_time_tracking_enabled, restart_time_tracking_limit
        False; 900 s: with tracking, the longest recent restart, at most the limit, replaces
        ``restart_time``.
    scale_up_max_factor, scale_down_max_factor
        100000 (>= 0) and 0.6 in [0, 1].
    scale_down_interval
        3600 s (>= 0; 0 scales down at once). Flink's deprecated ``scale-up.grace-period`` is
        this option's old key, not a rule of its own.
    backlog_processing_lag_threshold
        300 s of input (>= 0).
    scaling_effectiveness_detection_enabled, scaling_effectiveness_threshold
        False; 0.1 (>= 0), the share of an expected rate increase that makes a scale-up
        effective.
    vertex_min_parallelism, vertex_max_parallelism
        1 and 200 (integers, 1 <= min <= max).
    pipeline_max_parallelism
        The key groups, 128: Flink's default for jobs of up to 85 subtasks (>= 1).
    num_source_partitions, keyed_input, scaling_key_group_partitions_adjust_mode
        0 (unknown) and False: no alignment; with partitions, or a keyBy input, the
        parallelism is aligned to them or to the key groups (``"evenly_spread"`` or
        ``"maximize_utilisation"``).
    observed_scalability_enabled, observed_scalability_min_observations,
    observed_scalability_coefficient_min
        False, 3 (>= 1), 0.5 in (0, 1].
    history_max_count, history_max_age
        3 scalings (>= 1) and 86400 s (> 0) remembered.
    interval
        60 s between decisions (> 0): ``kubernetes.operator.reconcile.interval``.

    Every time is in seconds; every default is Flink's (``AutoScalerOptions``).

    >>> def seen(t):  # 4 instances of 100 records/s, always busy; 500 records/s arrive
    ...     return Observation(t=t, period=60.0, operators=4, arrival_rate=500.0,
    ...                        processed_rate=400.0, capacity=100.0, utilisation=1.0,
    ...                        backlog=100.0 * t, backlog_rate=100.0, backpressure=1.0)
    >>> flink = FlinkPolicy(metrics_window=120.0, stabilization_interval=0.0)
    >>> [flink.decide(seen(t)) for t in (60.0, 120.0, 180.0)]
    [4, 4, 9]

    (At 180 s the window 60-180 s is full: :math:`\\rho` = 400 < 500, outside the band;
    :math:`L` = 18,000, so round(18000/1800 + 500 × 300/1800 + 500/0.7) = 808 records/s,
    and ceil(4 × 808/400) = 9.)
    """

    name = "flink"

    def __init__(
        self,
        utilization_target: float = 0.7,
        target_utilization_boundary: float = 0.3,
        utilization_max: float | None = None,
        utilization_min: float | None = None,
        metrics_window: float = 900.0,
        stabilization_interval: float = 300.0,
        catch_up_duration: float = 1800.0,
        restart_time: float = 300.0,
        restart_time_tracking_enabled: bool = False,
        restart_time_tracking_limit: float = 900.0,
        scale_up_max_factor: float = 100000.0,
        scale_down_max_factor: float = 0.6,
        scale_down_interval: float = 3600.0,
        backlog_processing_lag_threshold: float = 300.0,
        scaling_effectiveness_detection_enabled: bool = False,
        scaling_effectiveness_threshold: float = 0.1,
        vertex_min_parallelism: int = 1,
        vertex_max_parallelism: int = 200,
        pipeline_max_parallelism: int = 128,
        num_source_partitions: int = 0,
        keyed_input: bool = False,
        scaling_key_group_partitions_adjust_mode: str = "evenly_spread",
        observed_scalability_enabled: bool = False,
        observed_scalability_min_observations: int = 3,
        observed_scalability_coefficient_min: float = 0.5,
        history_max_count: int = 3,
        history_max_age: float = 86400.0,
        interval: float = 60.0,
    ) -> None:
        name = self.name
        check_number(name, "utilization_target", utilization_target, minimum=0,
                     exclusive_minimum=True, maximum=1)  # fmt: skip
        check_number(name, "target_utilization_boundary", target_utilization_boundary,
                     minimum=0, maximum=1)  # fmt: skip
        if utilization_min is None and target_utilization_boundary > utilization_target:
            reject(name, "target_utilization_boundary", target_utilization_boundary,
                   f"target_utilization_boundary must be <= utilization_target "
                   f"({utilization_target}) unless utilization_min is given")  # fmt: skip
        if utilization_max is not None:
            check_number(name, "utilization_max", utilization_max, minimum=utilization_target)
        if utilization_min is not None:
            check_number(name, "utilization_min", utilization_min, minimum=0,
                         maximum=utilization_target)  # fmt: skip
        check_number(name, "metrics_window", metrics_window, minimum=0, exclusive_minimum=True)
        for setting, value in (
            ("stabilization_interval", stabilization_interval),
            ("catch_up_duration", catch_up_duration),
            ("restart_time", restart_time),
            ("restart_time_tracking_limit", restart_time_tracking_limit),
            ("scale_up_max_factor", scale_up_max_factor),
            ("scale_down_interval", scale_down_interval),
            ("backlog_processing_lag_threshold", backlog_processing_lag_threshold),
            ("scaling_effectiveness_threshold", scaling_effectiveness_threshold),
        ):
            check_number(name, setting, value, minimum=0)
        check_number(name, "scale_down_max_factor", scale_down_max_factor, minimum=0, maximum=1)
        for setting, flag in (
            ("restart_time_tracking_enabled", restart_time_tracking_enabled),
            ("scaling_effectiveness_detection_enabled", scaling_effectiveness_detection_enabled),
            ("keyed_input", keyed_input),
            ("observed_scalability_enabled", observed_scalability_enabled),
        ):
            if not isinstance(flag, bool):
                reject(name, setting, flag, f"{setting} must be true or false")
        check_number(name, "vertex_min_parallelism", vertex_min_parallelism, minimum=1,
                     integer=True)  # fmt: skip
        check_number(name, "vertex_max_parallelism", vertex_max_parallelism,
                     minimum=vertex_min_parallelism, integer=True)  # fmt: skip
        check_number(name, "pipeline_max_parallelism", pipeline_max_parallelism, minimum=1,
                     integer=True)  # fmt: skip
        check_number(name, "num_source_partitions", num_source_partitions, minimum=0,
                     integer=True)  # fmt: skip
        check_choice(name, "scaling_key_group_partitions_adjust_mode",
                     scaling_key_group_partitions_adjust_mode, ADJUST_MODES)  # fmt: skip
        check_number(name, "observed_scalability_min_observations",
                     observed_scalability_min_observations, minimum=1, integer=True)  # fmt: skip
        check_number(name, "observed_scalability_coefficient_min",
                     observed_scalability_coefficient_min, minimum=0, exclusive_minimum=True,
                     maximum=1)  # fmt: skip
        check_number(name, "history_max_count", history_max_count, minimum=1, integer=True)
        check_number(name, "history_max_age", history_max_age, minimum=0, exclusive_minimum=True)
        check_number(name, "interval", interval, minimum=0, exclusive_minimum=True)
        self.utilization_target = float(utilization_target)
        self.target_utilization_boundary = float(target_utilization_boundary)
        self.utilization_max = None if utilization_max is None else float(utilization_max)
        self.utilization_min = None if utilization_min is None else float(utilization_min)
        self.metrics_window = float(metrics_window)
        self.stabilization_interval = float(stabilization_interval)
        self.catch_up_duration = float(catch_up_duration)
        self.restart_time = float(restart_time)
        self.restart_time_tracking_enabled = restart_time_tracking_enabled
        self.restart_time_tracking_limit = float(restart_time_tracking_limit)
        self.scale_up_max_factor = float(scale_up_max_factor)
        self.scale_down_max_factor = float(scale_down_max_factor)
        self.scale_down_interval = float(scale_down_interval)
        self.backlog_processing_lag_threshold = float(backlog_processing_lag_threshold)
        self.scaling_effectiveness_detection_enabled = scaling_effectiveness_detection_enabled
        self.scaling_effectiveness_threshold = float(scaling_effectiveness_threshold)
        self.vertex_min_parallelism = int(vertex_min_parallelism)
        self.vertex_max_parallelism = int(vertex_max_parallelism)
        self.pipeline_max_parallelism = int(pipeline_max_parallelism)
        self.num_source_partitions = int(num_source_partitions)
        self.keyed_input = keyed_input
        self.scaling_key_group_partitions_adjust_mode = scaling_key_group_partitions_adjust_mode
        self.observed_scalability_enabled = observed_scalability_enabled
        self.observed_scalability_min_observations = int(observed_scalability_min_observations)
        self.observed_scalability_coefficient_min = float(observed_scalability_coefficient_min)
        self.history_max_count = int(history_max_count)
        self.history_max_age = float(history_max_age)
        self.interval = float(interval)
        self._parallelism: int | None = None  # running, as last observed
        self._running_since = 0.0  # when the job last became RUNNING
        self._restarting = False
        self._issued: int | None = None  # the target asked for, until it runs
        self._records_in = 0.0  # cumulative records processed
        self._samples: list[_Sample] = []
        self._history: list[tuple[float, Summary]] = []  # (decision time, summary)
        self._restarts: list[tuple[float, float | None]] = []  # (decision time, duration)
        self._delayed = DelayedScaleDown()

    def decide(self, observation: Observation) -> int:
        t, running = observation.t, observation.operators
        self._records_in += observation.processed_rate * observation.period
        if self._parallelism is None:
            self._parallelism, self._running_since = running, t - observation.period
        elif running != self._parallelism:  # a rescale landed: the job restarts
            self._parallelism, self._issued, self._restarting = running, None, True
            self._samples.clear()
        if self._restarting:
            if observation.processed_rate <= 0 and observation.backlog > 0:
                return running
            self._restarting, self._running_since = False, t - observation.period
            self._record_restart(running)
        if self._issued is not None:
            return self._issued
        self._samples.append(_Sample(t, self._records_in, observation.backlog,
                                     observation.utilisation))  # fmt: skip
        wanted = self._scaling_logic(t, running)
        if wanted != running:
            self._issued = wanted
        return wanted

    def restart_duration(self) -> float:
        """Seconds of restart the target capacity plans for (``getMaxRestartTimeOrDefault``)."""
        tracked = [d for _, d in self._restarts if d is not None]
        if not self.restart_time_tracking_enabled or not tracked:
            return self.restart_time
        return min(max(tracked), self.restart_time_tracking_limit)

    def _record_restart(self, running: int) -> None:
        """The latest scaling's restart took until now, if it landed on its target."""
        if self._restarts and self._restarts[-1][1] is None and self._history:
            decided, summary = self._history[-1]
            if summary.new == running and decided == self._restarts[-1][0]:
                self._restarts[-1] = (decided, max(0.0, self._running_since - decided))

    def _scaling_logic(self, t: float, running: int) -> int:
        """``JobAutoScalerImpl.runScalingLogic`` for the one vertex: the count it wants now."""
        self._trim(t)
        samples = self._samples
        if len(samples) < 2:
            return running
        stable = self._running_since + self.stabilization_interval
        after = next((sample.t for sample in samples if sample.t >= stable), t)
        if t < after + self.metrics_window:
            return running  # stabilising, or the window is not full yet
        samples[:] = [sample for sample in samples if sample.t >= t - self.metrics_window]
        if len(samples) < 2:
            return running  # a window shorter than the interval has no rate
        first, last = samples[0], samples[-1]
        elapsed = max(last.t - first.t, 1e-3)  # Flink counts at least 1 ms
        input_rate = (last.processed - first.processed) / elapsed
        target_rate = max(0.0, input_rate + (last.lag - first.lag) / elapsed)
        busy = sum(sample.busy for sample in samples) / len(samples)
        true_rate = input_rate / busy if input_rate > 0 and busy > 0 else math.inf
        if input_rate == 0:
            backlog = last.lag > 0
        else:
            backlog = last.lag / input_rate > self.backlog_processing_lag_threshold
        catch_up = self.catch_up_duration
        restart = self.restart_duration()
        evaluated = evaluate(
            self,
            running,
            target_rate,
            true_rate,
            catch_up_rate=last.lag / catch_up if catch_up > 0 else 0.0,
            backlog=backlog,
            restart_time=restart,
            max_parallelism=self.pipeline_max_parallelism,
            num_source_partitions=self.num_source_partitions,
            hash_input=self.keyed_input,
        )
        history = [summary for _, summary in self._history]
        change = compute_scale_target_parallelism(
            self, evaluated, history, restart, self._delayed, t, _VERTEX
        )
        if not job_scaling_summary({_VERTEX: change}):
            return running
        self._history.append((t, Summary(running, change.new, true_rate, change.expected_rate)))
        self._restarts.append((t, None))
        self._trim(t)
        self._delayed.clear()
        return change.new

    def _trim(self, t: float) -> None:
        """Forget scalings older than ``history_max_age`` or beyond ``history_max_count``."""
        keep = self.history_max_count
        self._history = [e for e in self._history if e[0] >= t - self.history_max_age][-keep:]
        latest = self._restarts[-1:]  # Flink keeps the latest restart record whatever its age
        kept = [r for r in self._restarts if r[0] >= t - self.history_max_age][-keep:]
        self._restarts = kept if kept[-1:] == latest else kept + latest
