"""The policy: what a user states about a stage, in units, and how many operators a volume needs."""

from __future__ import annotations

import inspect
import math
import sys
from typing import Any

from filters.base import check_number, reject
from scaling.cost import Prices
from scaling.legacy import mapped_settings

# v / capacity is rounded: 2.1 / 0.3 gives 7.000000000000001, whose ceiling would add an
# operator that no one asked for. A billionth of an operator is far below any real load change
# and far above that rounding (for fewer than about a million operators).
ROUNDING_TOLERANCE = 1e-9
_LARGEST = sys.float_info.max
# Queueing delay, seconds, over which a record is late: the SLO example of seed 002 (§5.3) and
# the latency bound of its threshold rule.
LATENCY = 10.0
# The unit every price is stated in: one operator running for one second.
OPERATOR_PRICE = 1.0
# Price of a second in which records are late, in operator-seconds; a user states their own.
# Chosen on the compare grid's paper, random_walk and increasing workloads, seed 1, across the
# actuation regimes (docs/baselines.md, "Prices"): at DESIGN.md's 50 the model buys fewer
# operators than the HPA and is late in more cells; at 1,000 it spends about the HPA's
# operator-seconds with under a third of its SLA seconds. Every other cell is out of sample.
LATE_PRICE = 1000.0
# Unstated, the price of a late second falls where every operation brings late seconds for
# certain (a restart longer than the latency: max(P - L, 0) of them, P the scale-down's restart
# measured), so that avoiding them is worth at most this many operator-seconds: 8 operators
# over the 300 s a count is compared over (scaling.cost.AFTER). At 1,000 per late second a 20 s
# restart made every operation cost 10,000, and the model held 33 spare operators rather than
# scale down (docs/baselines.md, "Session 20: a ratchet"). Tuned on the quick grid (synthetic
# workloads): 300 to 4,800 tried on seeds 1-3, where 1,200 did best; 2,400 because 1,200 lost
# six SLA keepers on seeds 4-6 (docs/baselines.md, "Session 23"), which are therefore not out
# of sample for it.
RESTART_AVOIDANCE = 2400.0
# Price of one scaling operation beyond its restart (which the model prices as late seconds),
# operator-seconds: the 30 per operation of DESIGN.md's cost.
OPERATION_PRICE = 30.0
# Seconds a scaling operation is assumed to stop processing until the Scaler has watched one:
# pods take 10-120 s to start and Spark executors 10-60 s (issue 30), stateless Storm 5-8 s
# (seed 001); 20 s errs long for the fast ones (whose first operation is then made later) and
# short for the slow ones, until one is measured. Also chosen on the grid above (8 s, the
# simulator's pause, made the first scale-down in a 30 s regime late).
RESTART = 20.0
# Seconds from a decision to its count running, assumed until the Scaler has watched one land:
# none, as the HPA, KEDA and Flink's autoscaler plan (none models it). A stage whose decisions
# are re-targeted before they land never measures one (docs/baselines.md, the (8, 30) Twitter
# cell: planned at 0 s, a pending scale-up was taken back before its 30 s were up), so a user
# whose pods take a minute to be scheduled and start states it.
DELAY = 0.0
# Defaults left out of ``spec``, so that specs stored before a setting existed still match.
_DEFAULTS: dict[str, Any] = {
    "latency": LATENCY,
    "operator_price": OPERATOR_PRICE,
    "late_price": LATE_PRICE,
    "late_probability": None,
    "operation_price": OPERATION_PRICE,
    "restart": RESTART,
    "delay": DELAY,
}


class ThresholdPolicy:
    """What a user states about a stage: capacity, bounds, latency and prices, in units.

    A volume alone needs

    .. math:: n(v) = \\min(\\max(n_{\\min}, \\lceil v / c - 10^{-9} \\rceil), n_{\\max})

    operators (``needed``), with :math:`c` = ``capacity``; the :math:`10^{-9}` absorbs the
    rounding of :math:`v / c`. A stage that reports its backlog is decided by the expected cost
    of each count over the horizon an operation covers (``scaling.cost``), priced with
    ``prices``: operator-seconds at ``operator_price``, seconds with records later than
    ``latency`` at ``late_price``, and ``operation_price`` per scaling operation. A user who
    cannot price a late second states ``late_probability`` instead: the largest share of the
    horizon that may be late, and the cheapest count within it is chosen. The policy is pure.

    Parameters
    ----------
    capacity
        Records/s one operator handles; a finite number > 0.
    min_operators, max_operators
        Fewest operators, an integer >= 0 (0 lets an idle job scale to zero); most, an integer
        >= ``min_operators``, or ``None`` for no limit. Hard limits on every candidate.
    latency
        Queueing delay, seconds (> 0, default 10), over which a record is late.
    operator_price
        Price of one operator-second (> 0; default 1: prices are in operator-seconds).
    late_price
        Price of one second with records late (>= 0, in operator-seconds). Unstated: 1,000,
        or less where a restart longer than ``latency`` makes every operation late for certain
        (``late_price_for``).
    late_probability
        Instead of ``late_price``: the largest expected share of the horizon with records late,
        in (0, 1]. Stating both is refused.
    operation_price
        Price of one scaling operation (>= 0; default 30 operator-seconds).
    restart
        Seconds (>= 0) a scaling operation is assumed to stop processing until the Scaler has
        measured one from what the job reports (Flink's ``job.autoscaler.restart.time``).
    delay
        Seconds (>= 0) from a decision to its count running (the actuation delay: a pod
        scheduled and started, an executor registered), assumed until the Scaler has measured
        one from the running counts reported; default 0.

    Specs written before the prices existed (``utilisation``, ``risk``, ``catch_up``, ``quiet``,
    ``quiet_weight``, ``lead``) are mapped by ``scaling.legacy.mapped_settings``.

    >>> policy = ThresholdPolicy(capacity=50.0)
    >>> [policy.needed(v) for v in (0.0, 49.9, 50.0, 100.0, 100.1)]
    [1, 1, 1, 2, 3]
    >>> ThresholdPolicy(capacity=50.0, min_operators=0, max_operators=4).needed(1000.0)
    4
    >>> ThresholdPolicy(**policy.spec) == policy
    True
    """

    def __init__(
        self,
        capacity: float,
        min_operators: int = 1,
        max_operators: int | None = None,
        latency: float = LATENCY,
        operator_price: float = OPERATOR_PRICE,
        late_price: float | None = None,
        late_probability: float | None = None,
        operation_price: float = OPERATION_PRICE,
        restart: float = RESTART,
        delay: float = DELAY,
    ) -> None:
        owner = type(self).__name__
        check_number(owner, "capacity", capacity, minimum=0, exclusive_minimum=True)
        check_number(owner, "min_operators", min_operators, minimum=0, integer=True)
        if max_operators is not None:
            check_number(owner, "max_operators", max_operators, minimum=min_operators, integer=True)
        check_number(owner, "latency", latency, minimum=0, exclusive_minimum=True)
        check_number(owner, "operator_price", operator_price, minimum=0, exclusive_minimum=True)
        if late_price is not None and late_probability is not None:
            reject(
                owner,
                "late_probability",
                late_probability,
                f"state late_price ({late_price!r}) or late_probability, not both",
            )
        if late_price is not None:
            check_number(owner, "late_price", late_price, minimum=0)
        if late_probability is not None:
            check_number(
                owner,
                "late_probability",
                late_probability,
                minimum=0,
                maximum=1,
                exclusive_minimum=True,
            )
        check_number(owner, "operation_price", operation_price, minimum=0)
        check_number(owner, "restart", restart, minimum=0)
        check_number(owner, "delay", delay, minimum=0)
        self.capacity = float(capacity)
        self.min_operators = int(min_operators)
        self.max_operators = None if max_operators is None else int(max_operators)
        self.latency = float(latency)
        self.operator_price = float(operator_price)
        self.late_probability = None if late_probability is None else float(late_probability)
        default_late = LATE_PRICE if late_probability is None else None
        self.late_price = default_late if late_price is None else float(late_price)
        self.late_price_stated = late_price is not None
        self.operation_price = float(operation_price)
        self.restart = float(restart)
        self.delay = float(delay)

    @classmethod
    def from_settings(cls, settings: object) -> ThresholdPolicy:
        """The policy of a Scaler spec's ``"policy"``, or ``ValueError`` saying what is allowed.

        Settings of specs written before the prices are mapped (``scaling.legacy``).

        >>> ThresholdPolicy.from_settings({"capacity": 50.0, "max_operators": 8}).max_operators
        8
        >>> ThresholdPolicy.from_settings({"capacity": 50.0, "risk": 0.01}).late_probability
        0.01
        """
        allowed = list(inspect.signature(cls).parameters)
        if not isinstance(settings, dict):
            allowed_policy = f"policy must be a dict of {allowed} (capacity is required)"
            reject("Scaler", "policy", settings, allowed_policy)
        settings = mapped_settings(settings)
        unknown = sorted(set(settings) - set(allowed))
        if unknown:
            field = f"policy.{unknown[0]}"
            reject("Scaler", field, settings[unknown[0]], f"allowed parameters: {allowed}")
        if "capacity" not in settings:
            reject("Scaler", "policy.capacity", None, "capacity is required: a number > 0")
        return cls(**settings)

    @property
    def prices(self) -> Prices:
        """The prices the cost model decides with (``late`` 0 with ``late_probability``)."""
        late = 0.0 if self.late_price is None else self.late_price
        return Prices(self.capacity, self.latency, self.operator_price, late, self.operation_price)

    def late_price_for(self, restart: float) -> float:
        """The price of a late second decided with when a scale-down's restart lasts
        ``restart`` seconds: the one stated (0 with ``late_probability``); unstated, 1,000,
        capped so that the ``restart - latency`` late seconds every operation brings cost at
        most ``RESTART_AVOIDANCE`` operator-seconds.

        >>> policy = ThresholdPolicy(capacity=50.0)
        >>> [policy.late_price_for(restart) for restart in (8.0, 12.0, 20.0, 60.0)]
        [1000.0, 1000.0, 240.0, 48.0]
        >>> ThresholdPolicy(capacity=50.0, late_price=1000.0).late_price_for(20.0)
        1000.0
        """
        if self.late_price is None:
            return 0.0
        if self.late_price_stated:
            return self.late_price
        certain = restart - self.latency  # late seconds every operation brings
        if certain <= 0.0:
            return self.late_price
        return min(self.late_price, RESTART_AVOIDANCE * self.operator_price / certain)

    def needed(self, volume: float) -> int:
        """Operators needed for ``volume`` (records/s, finite), within the bounds."""
        # A finite float, as every filtered volume is, needs no further check: the general
        # one's call was 3 K of a decision's 80 K instructions (issue 32).
        if type(volume) is not float or not -_LARGEST <= volume <= _LARGEST:
            check_number(type(self).__name__, "volume", volume)
        return self.clamp(math.ceil(volume / self.capacity - ROUNDING_TOLERANCE))

    def clamp(self, operators: int) -> int:
        """``operators`` brought into ``[min_operators, max_operators]``.

        >>> ThresholdPolicy(capacity=50.0, min_operators=2, max_operators=5).clamp(9)
        5
        """
        # Compared, not max() and min(): a builtin's call costs more than the comparison, and
        # a decision clamps twice (issue 32).
        if operators < self.min_operators:
            return self.min_operators
        if self.max_operators is not None and operators > self.max_operators:
            return self.max_operators
        return operators

    @property
    def spec(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict; ``ThresholdPolicy(**spec)`` rebuilds the policy.

        Settings at their defaults are left out, so that specs (and the states stored with
        them) written before a setting existed still compare equal.
        """
        spec: dict[str, Any] = {
            "capacity": self.capacity,
            "min_operators": self.min_operators,
            "max_operators": self.max_operators,
        }
        for name, default in _DEFAULTS.items():
            value = getattr(self, name)
            if name == "late_price" and self.late_probability is not None:
                continue  # implied by late_probability
            if value != default or (name == "late_price" and self.late_price_stated):
                spec[name] = value
        return spec

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ThresholdPolicy) and other.spec == self.spec

    def __repr__(self) -> str:
        params = ", ".join(f"{key}={value!r}" for key, value in self.spec.items())
        return f"{type(self).__name__}({params})"
