"""Kubernetes' Horizontal Pod Autoscaler as a baseline policy (HPA-CPU of seed 002)."""

from __future__ import annotations

import math
from collections import deque

from filters.base import Configurable, check_choice, check_number
from scaling.baselines.observation import Observation
from scaling.guards import Stabilization
from scaling.policy import ThresholdPolicy


class HpaPolicy(Configurable):
    """Kubernetes HPA (autoscaling/v2) with its default behaviour, on one averaged metric.

    With :math:`n` = ``operators``, :math:`m` the metric averaged over them and :math:`m^*` =
    ``target`` (seed 002 §1.3, Eq. 4.3; research/autoscalers.md §1.1):

    .. math:: r = \\lceil n\\, m / m^* \\rceil, \\qquad r = n \\text{ if }
              1 - \\text{tolerance} \\le m / m^* \\le 1 + \\text{tolerance}

    then, in Kubernetes' order (``horizontal.go``): (1) *stabilisation*: a scale-down goes
    only to the highest :math:`r` of the last ``stabilization_window`` seconds (this one
    included), never above :math:`n`; scale-ups are immediate (the scale-up window is 0);
    (2) *rate limits* (``selectPolicy: Max``), with :math:`n_0` the count ``rate_period``
    seconds ago (:math:`n` minus the changes this policy asked for since, carried out or not):
    up to :math:`\\max(\\lceil n_0 (1 + \\text{up\\%}/100) \\rceil, n_0 + \\text{up pods})`,
    down to :math:`\\lfloor n_0 (1 - \\text{down\\%}/100) \\rfloor`; (3) the bounds.

    Three rules of the controller's ``reconcileAutoscaler`` come before any metric is read:

    - *initial recommendation*: the first decision records :math:`n` itself as a
      recommendation, so a new autoscaler cannot scale below the count it found for
      ``stabilization_window`` seconds (``recordInitialRecommendation``);
    - *scaling disabled*: with :math:`n = 0` and ``min_operators`` > 0 the answer is 0: an
      operator who scaled the target to zero switched autoscaling off;
    - *bounds*: :math:`n` above ``max_operators`` or below ``min_operators`` goes to that bound
      at once, with neither the metric, the stabilisation nor the rate limits consulted.

    ``metric="utilisation"`` is HPA-CPU: :math:`m` = ``Observation.utilisation``, target 0.7
    (seed 002 Table 6.3). Busy time cannot exceed 1, so one decision multiplies :math:`n` by at
    most :math:`1/m^*` however large the overload (the thesis's finding, §1.3).
    ``metric="arrival_rate"`` is an ``AverageValue`` target on the volume, in tuples/s per
    instance: :math:`r = \\lceil \\text{arrival} / m^* \\rceil`, steadyscale's threshold rule
    behind HPA's window, and the only metric that can scale up from zero instances (where the
    tolerance is skipped, :math:`m` being undefined).

    Parameters
    ----------
    target, metric
        :math:`m^*` > 0; ``"utilisation"`` or ``"arrival_rate"``.
    tolerance, stabilization_window
        Dead band around :math:`m^*` (0.1), and seconds a recommendation holds off a
        scale-down (300 s), both >= 0: Kubernetes' defaults.
    scale_up_percent, scale_up_pods, scale_down_percent, rate_period
        The default ``behavior`` policies: +100 % or +4 pods, -100 % per 15 s.
    min_operators, max_operators, interval
        ``minReplicas`` (an integer >= 0), ``maxReplicas`` (``None``: no limit), and seconds
        between decisions, > 0 (the controller's sync period, 15 s).

    >>> from dataclasses import replace
    >>> seen = Observation(t=0.0, period=15.0, operators=10, arrival_rate=900.0,
    ...                    processed_rate=900.0, capacity=100.0, utilisation=0.9, backlog=0.0,
    ...                    backlog_rate=0.0, backpressure=0.0)
    >>> hpa = HpaPolicy()
    >>> hpa.decide(seen)  # ceil(10 * 0.9 / 0.7) = ceil(12.86)
    13
    >>> [hpa.decide(replace(seen, t=t, operators=13, utilisation=0.3)) for t in (15.0, 300.0)]
    [13, 6]
    """

    name = "hpa"

    def __init__(
        self,
        target: float = 0.7,
        metric: str = "utilisation",
        tolerance: float = 0.1,
        stabilization_window: float = 300.0,
        scale_up_percent: float = 100.0,
        scale_up_pods: int = 4,
        scale_down_percent: float = 100.0,
        rate_period: float = 15.0,
        min_operators: int = 1,
        max_operators: int | None = None,
        interval: float = 15.0,
    ) -> None:
        check_number(self.name, "target", target, minimum=0, exclusive_minimum=True)
        check_choice(self.name, "metric", metric, ("utilisation", "arrival_rate"))
        check_number(self.name, "tolerance", tolerance, minimum=0)
        check_number(self.name, "stabilization_window", stabilization_window, minimum=0)
        check_number(self.name, "scale_up_percent", scale_up_percent, minimum=0)
        check_number(self.name, "scale_up_pods", scale_up_pods, minimum=0, integer=True)
        check_number(self.name, "scale_down_percent", scale_down_percent, minimum=0, maximum=100)
        check_number(self.name, "rate_period", rate_period, minimum=0, exclusive_minimum=True)
        check_number(self.name, "min_operators", min_operators, minimum=0, integer=True)
        if max_operators is not None:
            check_number(
                self.name, "max_operators", max_operators, minimum=min_operators, integer=True
            )
        check_number(self.name, "interval", interval, minimum=0, exclusive_minimum=True)
        self.target, self.metric, self.tolerance = float(target), metric, float(tolerance)
        self.stabilization_window = float(stabilization_window)
        self.scale_up_percent, self.scale_up_pods = float(scale_up_percent), int(scale_up_pods)
        self.scale_down_percent, self.rate_period = float(scale_down_percent), float(rate_period)
        self.min_operators = int(min_operators)
        self.max_operators = None if max_operators is None else int(max_operators)
        self.interval = float(interval)
        # Capacity 1: needed(x) is the ceiling of x (float noise absorbed) within the bounds.
        self._bounds = ThresholdPolicy(1.0, self.min_operators, self.max_operators)
        self._stabilization = Stabilization(window=self.stabilization_window)
        self._changes: deque[tuple[float, int]] = deque()  # (t, replicas added or removed)
        self._started = False

    def decide(self, observation: Observation) -> int:
        n, t = observation.operators, observation.t
        window = self._stabilization
        if not self._started:
            # Kubernetes records the count it found as the first recommendation.
            self._started = True
            window.record(n, n, t, target=n)
        if n == 0 and self.min_operators > 0:
            return 0
        if self.max_operators is not None and n > self.max_operators:
            wanted = self.max_operators
        elif n < self.min_operators:
            wanted = self.min_operators
        else:
            proposal = self._proposal(observation)
            # The guard reads only the target, the current count and t; the rest is its interface.
            held, _ = window.apply(proposal, current=n, filtered=0.0, t=t, policy=self._bounds)
            window.record(n, held, t, target=proposal)
            wanted = self._bounds.clamp(self._rate_limited(held, n, t))
        if wanted != n:
            self._changes.append((t, wanted - n))
        return wanted

    def _proposal(self, observation: Observation) -> int:
        """The recommendation :math:`r` before stabilisation (VargaPolicy adds a metric)."""
        n = observation.operators
        if self.metric == "utilisation":
            return self._replicas(n * observation.utilisation, self.target, n)
        return self._replicas(observation.arrival_rate, self.target, n)

    def _replicas(self, total: float, target: float, operators: int) -> int:
        """:math:`\\lceil` total / target :math:`\\rceil`, or ``operators`` within tolerance."""
        # Kubernetes' Tolerances.isWithin, bounds included: at 10 replicas a ratio of exactly
        # 1.1 (11 wanted) is within a tolerance of 0.1.
        ratio = total / (operators * target) if operators > 0 else math.nan
        if 1.0 - self.tolerance <= ratio <= 1.0 + self.tolerance:
            return operators
        return self._bounds.needed(total / target)

    def _rate_limited(self, wanted: int, operators: int, t: float) -> int:
        changes = self._changes
        while changes and t - changes[0][0] >= self.rate_period:
            changes.popleft()
        start = operators - sum(change for _, change in changes)
        if wanted > operators:
            up = math.ceil(start * (1 + self.scale_up_percent / 100))
            return min(wanted, max(up, start + self.scale_up_pods, operators))
        if wanted < operators:
            down = math.floor(start * (1 - self.scale_down_percent / 100))
            return max(wanted, min(down, operators))
        return wanted
