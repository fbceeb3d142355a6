"""DS2 (Kalavri et al., OSDI 2018) as a baseline policy, as seed 002 ran it."""

from __future__ import annotations

from filters.base import Configurable, check_number
from scaling.baselines.observation import Observation
from scaling.policy import ThresholdPolicy


class Ds2Policy(Configurable):
    """Instances for the input rate at each instance's *true* processing rate, over-provisioned.

    DS2 measures how fast an instance processes while it is busy (its useful time), so that
    idle time does not hide spare capacity (seed 002 §1.2, Eq. 4.2; reference code
    ``strymon-system/ds2``, ``controller/src/policy/scaling.rs``). For one stage whose
    target rate is the source's input rate:

    .. math:: \\rho = \\frac{\\text{processed}}{u\\, n}, \\qquad
              p = \\left\\lceil \\frac{\\lambda}{\\rho}\\, f \\right\\rceil

    with :math:`\\lambda` = ``arrival_rate`` (the observed source rate), :math:`u` =
    ``utilisation`` and :math:`n` = ``operators``, so :math:`u\\, n` is the useful time per
    second of all instances and :math:`\\rho` is ``Observation.capacity`` whenever the stage
    was busy. :math:`f` = ``overprovisioning`` = 1.2 (Table 6.2): DS2 sizes for the input rate
    alone, which never drains a backlog, so the thesis asked for 20 % more. The thesis
    multiplied DS2's answer by :math:`f`; here :math:`f` goes inside the ceiling, which is
    DS2's own ``scaling_factor`` = :math:`f - 1` and rounds once instead of twice.

    Like DS2's manager, the policy believes that what it last asked for is running: it holds
    that count, not the observed one, when it does not change it. Guards and timing:

    * busy time 0 (nothing processed, e.g. during a reconfiguration pause) makes :math:`\\rho`
      unmeasurable: DS2 divided by zero and asked for infinitely many instances (§1.2); here
      the count is held. No input at all needs no instances: ``min_operators``.
    * ``warm_up_intervals`` = 2 decisions after a reconfiguration are skipped, and the job's
      start counts as one (``ds2.toml`` ``warm_up_time``, research/autoscalers.md §1.7).
    * ``activation_intervals`` = 1: a change is issued only once DS2 has evaluated that many
      times since the last one (``activation_time``; the reference manager counts evaluations
      and does not compare them).
    * ``interval`` = 15 s, the thesis's decision period for every scaler (§1.0); DS2's own
      ``policy_interval`` is 10 s. Seed 002 gives no warm-up or activation of its own: it ran
      DS2's policy module alone. The manager's rule that a drop by a single instance is not
      worth a reconfiguration is left out for the same reason.

    Parameters
    ----------
    overprovisioning
        :math:`f`, >= 1.
    warm_up_intervals
        Decisions skipped after each change, an integer >= 0.
    activation_intervals
        Evaluations needed before a change, an integer >= 1.
    min_operators, max_operators
        Bounds: an integer >= 0, and ``None`` (no limit) or an integer >= ``min_operators``.
    interval
        Seconds between decisions, > 0.

    >>> seen = Observation(t=30.0, period=15.0, operators=5, arrival_rate=1000.0,
    ...                    processed_rate=400.0, capacity=100.0, utilisation=0.8,
    ...                    backlog=9000.0, backlog_rate=600.0, backpressure=0.0)
    >>> Ds2Policy(warm_up_intervals=0).decide(seen)  # rho = 400 / (0.8 * 5) = 100 per instance
    12
    """

    name = "ds2"

    def __init__(
        self,
        overprovisioning: float = 1.2,
        warm_up_intervals: int = 2,
        activation_intervals: int = 1,
        min_operators: int = 1,
        max_operators: int | None = None,
        interval: float = 15.0,
    ) -> None:
        check_number(self.name, "overprovisioning", overprovisioning, minimum=1)
        check_number(self.name, "warm_up_intervals", warm_up_intervals, minimum=0, integer=True)
        check_number(
            self.name, "activation_intervals", activation_intervals, minimum=1, integer=True
        )
        check_number(self.name, "min_operators", min_operators, minimum=0, integer=True)
        if max_operators is not None:
            check_number(
                self.name, "max_operators", max_operators, minimum=min_operators, integer=True
            )
        check_number(self.name, "interval", interval, minimum=0, exclusive_minimum=True)
        self.overprovisioning = float(overprovisioning)
        self.warm_up_intervals = int(warm_up_intervals)
        self.activation_intervals = int(activation_intervals)
        self.min_operators = int(min_operators)
        self.max_operators = None if max_operators is None else int(max_operators)
        self.interval = float(interval)
        # Capacity 1: needed(x) is the ceiling of x (float noise absorbed) within the bounds.
        self._bounds = ThresholdPolicy(1.0, self.min_operators, self.max_operators)
        self._warm_up_left = self.warm_up_intervals
        self._evaluations = 0
        self._issued: int | None = None

    def decide(self, observation: Observation) -> int:
        # DS2 believes that what it last asked for is running.
        running = observation.operators if self._issued is None else self._issued
        if self._warm_up_left > 0:
            self._warm_up_left -= 1
            return self._bounds.clamp(running)
        self._evaluations += 1
        wanted = self._optimal(observation)
        activated = self._evaluations >= self.activation_intervals
        if wanted is not None and wanted != running and activated:
            self._issued, self._warm_up_left, self._evaluations = wanted, self.warm_up_intervals, 0
            return wanted
        return self._bounds.clamp(running)

    def _optimal(self, observation: Observation) -> int | None:
        """:math:`p`, or ``None`` when the true rate :math:`\\rho` cannot be measured."""
        if observation.arrival_rate <= 0:
            return self._bounds.needed(0.0)
        useful_time = observation.utilisation * observation.operators
        if useful_time <= 0 or observation.processed_rate <= 0:
            return None
        true_rate = observation.processed_rate / useful_time
        return self._bounds.needed(observation.arrival_rate / true_rate * self.overprovisioning)
