"""The Scaler: a denoiser, a policy and guards, turning samples into decisions."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from filters import Denoiser
from filters.base import check_number, reject
from scaling.cadence import Cadence
from scaling.choice import Choice, choose
from scaling.cost import AFTER, LONGEST_TENURE
from scaling.decision import Action, Decision, cost_reason, reason_code
from scaling.guards import Guard
from scaling.limits import through_guards, within_bounds
from scaling.measure import DOWN, UP, level_error
from scaling.outlook import Outlook
from scaling.policy import ThresholdPolicy
from scaling.scaler_state import checked, load_parts, optional
from scaling.spec import read_spec
from scaling.threshold import threshold_decision
from scaling.trend import Trend
from scaling.watch import Watch

_LARGEST = sys.float_info.max


class Scaler:
    """Volume samples in, operator counts out: the one object every user of steadyscale drives.

    For each sample ``(volume, t)``, ``observe``

    1. refuses a ``volume`` that is not a finite number >= 0, or a ``t`` that is not a finite
       number greater than the previous ``t`` (``ValueError``, and nothing changes);
    2. filters it, ``filtered = filter.weighed(volume, weight)`` with the sample's weight, the
       interval it covers over the stream's typical one (``scaling.cadence``), and smooths
       the level's slope;
    3. decides:

       * a volume alone (no ``backlog``): ``policy.needed(filtered)``, the paper's threshold,
         then each guard in order, each on the previous one's output;
       * a stage that reports its ``backlog``: the count of least expected cost over the
         horizon an operation covers (``scaling.choice.choose``, ``scaling.cost``), from the
         level, its error (``scaling.measure.level_error``) and slope, the arrivals' variance
         per second (the filter's noise estimate × the typical interval), the backlog, the
         running count, a decision not yet running, and the restart, the actuation delay
         and the late seconds an operation brings, measured from what the job reports
         (``scaling.watch``), how fast the level wanders (``scaling.measure.wandered``) and
         how long the running count has stood (its age: the count decided is priced over as
         long, from ``cost.AFTER`` to ``cost.LONGEST_TENURE``);
         the bounds limit the candidates; then each guard but those deciding from the
         filter's standard error (``confidence``: the model prices it); held while the
         filter warms up;
    4. brings the result into the policy's bounds, ``operators = policy.clamp(target)``;
    5. tells each guard what happened (``record``) and returns a ``Decision`` with its reason
       code, its record (``explain``) and the prose written from it.

    The bounds are hard limits, so the initial ``operators`` may lie outside them (it is the
    count actually running, e.g. a job started by hand): the first decision brings it within.

    Time is only ever the ``t`` passed in, in seconds from any origin; nothing reads a clock.
    The filter and the guards carry state: give each Scaler objects of its own.

    Parameters
    ----------
    filter
        The denoiser the samples go through.
    policy
        The policy: capacity, bounds, latency and prices.
    guards
        Guards applied in this order. Order matters: a guard sees the previous one's output,
        e.g. put ``stabilization`` before ``max_step`` (as Kubernetes does), otherwise the
        stabilisation window remembers the limited steps and holds every further step down.
    operators
        Operators running before the first sample, an integer >= 0.

    >>> from filters import make_filter
    >>> from scaling.guards import make_guard
    >>> scaler = Scaler(make_filter("raw"), ThresholdPolicy(capacity=50.0),
    ...                 [make_guard("cooldown", down=60.0)], operators=2)
    >>> for t, volume in [(0.0, 90.0), (30.0, 160.0), (60.0, 90.0), (90.0, 40.0)]:
    ...     d = scaler.observe(volume, t)
    ...     print(d.operators, d.code, d.reason)
    2 Steady filtered 90.0 needs 2 = 2
    4 ScaledUp filtered 160.0 needs 4 > 2
    4 LimitedByGuard filtered 90.0 needs 2 < 4; held by cooldown: last scale-up 30 s ago < 60 s
    1 ScaledDown filtered 40.0 needs 1 < 4
    >>> Scaler.from_spec(scaler.spec, operators=1).spec == scaler.spec
    True
    """

    def __init__(
        self,
        filter: Denoiser,
        policy: ThresholdPolicy,
        guards: Sequence[Guard] = (),
        operators: int = 1,
    ) -> None:
        for index, guard in enumerate(guards):
            if not isinstance(guard, Guard):
                raise ValueError(
                    f"Scaler: guards[{index}]={guard!r} is not allowed: guards must be Guard "
                    "objects (make_guard builds them from specs)"
                )
            if guard.needs_spread and not filter.reports_spread:
                raise ValueError(
                    f"Scaler: guards[{index}]={guard.spec!r} is not allowed with "
                    f"filter={filter.spec!r}: it decides from the filter's standard error, which "
                    "only filters with reports_spread give (e.g. 'changepoint')"
                )
        check_number("Scaler", "operators", operators, minimum=0, integer=True)
        self.filter = filter
        self.policy = policy
        self.guards = tuple(guards)
        self._operators = int(operators)  # the last decided count
        self._last_t: float | None = None
        self._interval = 1.0  # seconds between the last two samples
        self.cadence = Cadence()  # and the typical interval, which a sample's weight is over
        self.trend = Trend()  # the last level, its slope, the samples' excess over it
        self.watch = Watch()  # decisions not yet running, restarts and delays measured

    @property
    def operators(self) -> int:
        """Operators running after the last decision (the initial count before any)."""
        return self._operators

    def observe(
        self,
        volume: float,
        t: float,
        *,
        backlog: float | None = None,
        running: int | None = None,
        processed: float | None = None,
    ) -> Decision:
        """Take the sample ``volume`` (records/s) at time ``t`` (seconds) and decide.

        What the job reports beyond its volume is optional: ``backlog`` (records waiting:
        consumer lag, queue length), ``running`` (the operators actually running now: the
        decision and every guard reason from it instead of from the last decision, which may
        not have been applied; a decided count asked for again while it lands is the same
        operation, not judged by the guards anew) and ``processed`` (records/s processed).
        Each is refused unless finite and >= 0 (``running`` an integer), and nothing changes
        then. When the running count becomes the decided one, the time since the decision is
        an actuation delay; from then, samples that processed under half of what the job could
        measure the restart (``scaling.measure.restarting``).
        """
        # A float within range, as every sample the service passes, needs no further check.
        if type(volume) is not float or not 0.0 <= volume <= _LARGEST:
            check_number("Scaler", "volume", volume, minimum=0)
        if type(t) is not float or not -_LARGEST <= t <= _LARGEST:
            check_number("Scaler", "t", t)
        if backlog is not None:
            check_number("Scaler", "backlog", backlog, minimum=0)
        if processed is not None:
            check_number("Scaler", "processed", processed, minimum=0)
        if running is not None:
            check_number("Scaler", "running", running, minimum=0, integer=True)
        last_t = self._last_t
        if last_t is not None and not t > last_t:
            reject("Scaler", "t", t, f"t must be greater than the previous t={last_t!r}")
        volume, t = float(volume), float(t)
        decided = self._operators
        previous = decided if running is None else int(running)
        self.watch.seen(t, running, decided, last_t)
        weight = 1.0
        if last_t is not None:
            self._interval = interval = t - last_t
            weight = self.cadence.seen(interval)
        filtered, spread = self._filter(volume, t, weight, backlog is not None)
        if backlog is None:
            landing = decided if self.watch.decided_at is not None else None
            operators, code, reason, explain = threshold_decision(
                self.policy, self.guards, filtered, spread, previous, t, landing
            )
        else:
            policy, watch, interval = self.policy, self.watch, self._interval
            capacity = policy.capacity
            watch.measure(t, previous, decided, capacity, float(backlog), processed, interval)
            watch.lateness(
                t, previous, capacity, float(backlog), policy.latency, policy.restart, interval
            )
            operators, code, reason, explain = self._cost(
                filtered, spread, previous, decided, float(backlog), t
            )
        self.watch.decided(t, previous, operators, reported=running is not None)
        self._operators, self._last_t = operators, t
        action: Action = (
            "up" if operators > previous else "down" if operators < previous else "none"
        )
        if backlog is not None:
            backlog = float(backlog)
        if running is not None:
            running = int(running)
        if processed is not None:
            processed = float(processed)
        # Every field, without the frozen dataclass's __init__ (Decision.made).
        return Decision.made(
            t, volume, filtered, previous, operators, action, reason,
            backlog, running, processed, code, explain,
        )  # fmt: skip

    def _filter(
        self, volume: float, t: float, weight: float, queued: bool
    ) -> tuple[float, float | None]:
        """The level after a sample of ``weight`` (``scaling.cadence``) and the filter's spread
        then (worked out once: it is most of a decision's cost outside the cost model).

        The trend (``scaling.trend``) follows the level from the first sample that reports a
        backlog (``queued``) on: only the cost model decides from it, and a stream of volumes
        alone saves its cost, about a tenth of such a decision's (docs/benchmarks.md, session
        27). A stream that reports its backlog later starts it then, as from a stored state of
        before the trend (``scaling.scaler_state.LATER``): no slope, no excess, until the
        seconds it averages over have passed."""
        last_t, denoiser, trend = self._last_t, self.filter, self.trend
        # A sample of weight 1 is one sample to every filter (tests/filters/test_contract.py):
        # an even stream's takes the shorter way, without the weight's check.
        filtered = denoiser.update(volume) if weight == 1.0 else denoiser.weighed(volume, weight)
        spread = denoiser.spread
        if queued or trend.filtered is not None:
            warm = spread is not None or not denoiser.reports_spread
            trend.follow(volume, filtered, None if last_t is None else t - last_t, warm)
        return filtered, spread

    def _cost(
        self,
        filtered: float,
        spread: float | None,
        previous: int,
        decided: int,
        backlog: float,
        t: float,
    ) -> tuple[int, str, str, dict[str, Any]]:
        """A stage that reports its backlog: the count of least expected cost, then the guards
        that the model does not subsume, then the bounds."""
        policy = self.policy
        if self.filter.reports_spread and spread is None:
            operators = policy.clamp(previous)
            explain = {"model": "cost", "inputs": {"filtered": filtered}}
            reason = f"held at {previous}: the filter warms up (no standard error yet)"
            return operators, "WarmingUp", reason, explain
        noise = self.filter.noise or 0.0
        restart = self.watch.restart(t, policy.restart, UP)
        typical = self.cadence.typical  # the interval the noise is a sample's over
        delay = self.watch.actuation(t, policy.delay)
        lands_in, overdue = self.watch.waiting(t, delay)
        trend = self.trend
        outlook = Outlook(
            level=filtered,
            level_error=level_error(spread or 0.0, trend.missed, noise, typical),
            excess=trend.excess,
            slope=trend.slope,
            variance=noise * noise * typical,  # per sample -> per second
            backlog=backlog,
            running=previous,
            landing=lands_in,
            restart=restart,
            wander=trend.wander,
            operation_late=self.watch.operation_late(t, max(restart - policy.latency, 0.0)),
            restart_down=self.watch.restart(t, policy.restart, DOWN),
            tenure=min(max(self.watch.age(t), AFTER), LONGEST_TENURE),
            pending=decided if self.watch.partly else None,
            overdue=overdue,
            delay=delay,
        )
        choice: Choice = choose(outlook, policy)
        explain = choice.explain(policy)
        reasons = [cost_reason(previous, choice.operators, explain)]
        if choice.unbounded != choice.operators:
            bound = "max_operators" if choice.unbounded > choice.operators else "min_operators"
            reasons.append(f"{choice.unbounded} is cheapest, limited by {bound}")
        landing = decided if self.watch.decided_at is not None else None
        target, given, since = through_guards(
            self.guards,
            choice.operators,
            previous,
            filtered,
            t,
            policy,
            spread,
            reasons,
            every=False,
            landing=landing,
        )
        operators = within_bounds(policy, target, since, t, reasons, given)
        bounded = operators != target or choice.unbounded != choice.operators
        pending = operators == landing != previous
        guarded = target != choice.operators
        code = reason_code(operators, previous, pending, policy.needed(filtered), guarded, bounded)
        return operators, code, "; ".join(reasons), explain

    @property
    def spec(self) -> dict[str, Any]:
        """``{"filter": ..., "policy": ..., "guards": [...]}``, JSON-ready; see ``from_spec``."""
        return {
            "filter": self.filter.spec,
            "policy": self.policy.spec,
            "guards": [guard.spec for guard in self.guards],
        }

    @classmethod
    def from_spec(cls, spec: dict[str, Any], operators: int = 1) -> Scaler:
        """Build a fresh Scaler from a ``spec``; ``"filter"`` and ``"guards"`` may be left out.

        Without ``"filter"``, the Scaler gets the recommended configuration, the one to use when
        in doubt (``default_spec``): a ``changepoint`` filter whose resolution is the policy's
        capacity, and (unless ``"guards"`` are given) the ``confidence`` guard. It needs no noise
        level: it estimates the noise, and decides from how uncertain its level is. With a
        ``"filter"`` and no ``"guards"``, there are none.

        Raises ``ValueError`` naming what is wrong and what is allowed.

        >>> spec = {"filter": {"name": "tvd", "lam": 40.0}, "policy": {"capacity": 50.0},
        ...         "guards": [{"name": "cooldown", "down": 120.0}]}
        >>> Scaler.from_spec(spec, operators=3).operators
        3
        >>> default = Scaler.from_spec({"policy": {"capacity": 50.0}})
        >>> default.filter.spec["resolution"], [guard.name for guard in default.guards]
        (50.0, ['confidence'])
        """
        return cls(*read_spec(spec), operators)

    def state_dict(self) -> dict[str, Any]:
        """Spec, filter and guard states, what the Scaler measured and remembers, JSON-ready."""
        return {
            "spec": self.spec,
            "filter": self.filter.state_dict(),
            "guards": [guard.state_dict() for guard in self.guards],
            "operators": self._operators,
            "t": self._last_t,
            "interval": self._interval,
            "intervals": self.cadence.intervals,
            **self.trend.state_dict(),
            **self.watch.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue exactly from a state taken by ``state_dict()`` of a Scaler with this spec
        (states from before the cost model are mapped: ``scaling.scaler_state``).

        Raises ``ValueError``, and changes nothing, when the spec differs or any part of the
        state is malformed.
        """
        state = checked(state, self.spec)
        load_parts(self.filter, self.guards, state)
        self._operators = int(state["operators"])
        self._last_t = optional(state["t"])
        self._interval = float(state["interval"])
        self.cadence = Cadence([float(interval) for interval in state["intervals"]])
        self.trend.load_state_dict(state)
        self.watch.load_state_dict(state)
