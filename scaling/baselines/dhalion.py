"""Dhalion (Floratou et al., VLDB 2017) as a baseline policy, as seed 002 ran it."""

from __future__ import annotations

import math

from filters.base import Configurable, check_number
from scaling.baselines.observation import Observation
from scaling.policy import ROUNDING_TOLERANCE, ThresholdPolicy

# 1 / (1 - bp) has no bound as bp -> 1 (a stage that blocked its upstream all period); the
# thesis met the same infinity in DS2 and capped steps at +15 (seed 002 §1.0, §1.2). Reading
# bp as at most 0.9 caps one step at x10.
_MAX_BACKPRESSURE = 0.9


class DhalionPolicy(Configurable):
    """Scale up the back-pressured stage by what it could not take; shrink a healthy one by 20 %.

    Symptoms, diagnosis and resolution for one stage, with :math:`n` = ``operators`` (seed 002
    §1.1, §4.2 Eq. 4.1 and §6.7.1 Eqs. 6.1-6.2):

    * **back-pressure**, :math:`bp` = ``Observation.backpressure`` > 0: the fraction of the
      period the stage's full input buffer blocked its upstream, which is the upstream's
      back-pressure time (seconds per second) that the thesis reads. The upstream delivered
      :math:`1 - bp` of what it wanted to, so (Eq. 4.1, "1 + suspended/processed")

      .. math:: n' = \\lceil n / (1 - bp) \\rceil

      (the thesis prints Eq. 6.1 without the "1 +"; seed 002 §1.1 restores it: 8 instances
      at :math:`bp` = 0.2 become 10.) :math:`bp` is read as at most 0.9.
    * **lag growing** faster than ``lag_rate_threshold`` records/s with no back-pressure: the
      stage reads its input queue itself, like the thesis's source operators, so (Eq. 6.2)
      :math:`n' = \\lceil n\\, (1 + \\dot{\\ell} / \\text{throughput}) \\rceil` with
      :math:`\\dot{\\ell}` = ``backlog_rate`` and throughput = ``processed_rate``; held when
      nothing was processed. Dhalion's threshold has no published value; 1000 records/s is
      HPA-Varga's for the same symptom (Table 6.4).
    * **healthy**: neither symptom and ``backlog`` < ``lag_threshold`` = 10,000 records (the
      "Kafka-close-to-zero" threshold, Table 6.1; our stage has no buffer-usage metric, so the
      0.2 buffer threshold has no counterpart): :math:`n' = \\lfloor n (1 - s) \\rfloor` with
      :math:`s` = ``scale_down`` = 0.2. The thesis calls this "factor 1.2" and "0.8" and
      gives no rounding (§1.1); 20 -> 16 fits both, and rounding down removes at least one
      instance, so small stages can shrink too.

    After every change nothing changes for ``cooldown`` = 300 s (the thesis's five minutes,
    §1.0; the original Dhalion ran its policy every five minutes), decided every
    ``interval`` = 15 s. The record thresholds are for Nexmark at up to 2.5 M records/s; at
    200-500 tuples/s scale them with the volume.

    Parameters
    ----------
    scale_down
        Fraction removed from a healthy stage, > 0 and <= 1 (1: down to ``min_operators``).
    lag_threshold
        Backlog below which the stage counts as healthy, records, >= 0.
    lag_rate_threshold
        Backlog growth that counts as back-pressure, records/s, >= 0.
    cooldown
        Seconds without changes after a change, >= 0.
    min_operators, max_operators
        Bounds: an integer >= 0, and ``None`` (no limit) or an integer >= ``min_operators``.
    interval
        Seconds between decisions, > 0.

    >>> from dataclasses import replace
    >>> seen = Observation(t=0.0, period=15.0, operators=8, arrival_rate=1000.0,
    ...                    processed_rate=800.0, capacity=100.0, utilisation=1.0,
    ...                    backlog=50_000.0, backlog_rate=0.0, backpressure=0.2)
    >>> dhalion = DhalionPolicy()
    >>> dhalion.decide(seen)
    10
    >>> healthy = {"operators": 10, "utilisation": 0.5, "backlog": 0.0, "backpressure": 0.0}
    >>> [dhalion.decide(replace(seen, t=t, **healthy)) for t in (15.0, 300.0)]
    [10, 8]
    """

    name = "dhalion"

    def __init__(
        self,
        scale_down: float = 0.2,
        lag_threshold: float = 10_000.0,
        lag_rate_threshold: float = 1000.0,
        cooldown: float = 300.0,
        min_operators: int = 1,
        max_operators: int | None = None,
        interval: float = 15.0,
    ) -> None:
        check_number(
            self.name, "scale_down", scale_down, minimum=0, maximum=1, exclusive_minimum=True
        )
        check_number(self.name, "lag_threshold", lag_threshold, minimum=0)
        check_number(self.name, "lag_rate_threshold", lag_rate_threshold, minimum=0)
        check_number(self.name, "cooldown", cooldown, minimum=0)
        check_number(self.name, "min_operators", min_operators, minimum=0, integer=True)
        if max_operators is not None:
            check_number(
                self.name, "max_operators", max_operators, minimum=min_operators, integer=True
            )
        check_number(self.name, "interval", interval, minimum=0, exclusive_minimum=True)
        self.scale_down = float(scale_down)
        self.lag_threshold = float(lag_threshold)
        self.lag_rate_threshold = float(lag_rate_threshold)
        self.cooldown = float(cooldown)
        self.min_operators = int(min_operators)
        self.max_operators = None if max_operators is None else int(max_operators)
        self.interval = float(interval)
        # Capacity 1: needed(x) is the ceiling of x (float noise absorbed) within the bounds.
        self._bounds = ThresholdPolicy(1.0, self.min_operators, self.max_operators)
        self._last_change: tuple[float, int] | None = None  # (t, count asked for)

    def decide(self, observation: Observation) -> int:
        n, t = observation.operators, observation.t
        if self._last_change is not None and t - self._last_change[0] < self.cooldown:
            return self._last_change[1]
        wanted = self._resolve(observation)
        if wanted != n:
            self._last_change = (t, wanted)
        return wanted

    def _resolve(self, observation: Observation) -> int:
        n = observation.operators
        if observation.backpressure > 0:
            suspended = min(observation.backpressure, _MAX_BACKPRESSURE)
            return self._bounds.needed(n / (1 - suspended))
        if observation.backlog_rate > self.lag_rate_threshold:
            if observation.processed_rate <= 0:
                return self._bounds.clamp(n)
            return self._bounds.needed(
                n * (1 + observation.backlog_rate / observation.processed_rate)
            )
        if observation.backlog < self.lag_threshold:
            return self._bounds.clamp(math.floor(n * (1 - self.scale_down) + ROUNDING_TOLERANCE))
        return self._bounds.clamp(n)
