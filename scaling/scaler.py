"""The Scaler: a denoiser, a threshold policy and guards, turning samples into decisions."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from filters import Denoiser, make_filter
from filters.base import check_number, reject
from scaling.decision import Action, Decision
from scaling.guards import Guard, make_guard
from scaling.policy import ThresholdPolicy
from scaling.queue import (
    awaiting,
    demand_terms,
    measure_actuation,
    measure_restart,
    operation_basis,
    queue_target,
    settling,
    smoothed_slope,
)
from scaling.scaler_state import checked

_SPEC_KEYS = {"filter", "policy", "guards"}


def default_spec(capacity: float) -> dict[str, Any]:
    """The filter and guards a Scaler gets when its spec names none: the recommended default.

    ``changepoint`` averages the samples since the last change of level it detected, leaving
    spikes out; its resolution, the smallest change that matters, is one operator's capacity.
    ``confidence`` scales down only once the level is below the threshold by 1.5 standard
    errors, so the dead band follows the noise. docs/default.md measures it against 75
    hand-tuned configurations.

    >>> default_spec(50.0)
    {'filter': {'name': 'changepoint', 'resolution': 50.0}, 'guards': [{'name': 'confidence'}]}
    """
    return {
        "filter": {"name": "changepoint", "resolution": float(capacity)},
        "guards": [{"name": "confidence"}],
    }


class Scaler:
    """Volume samples in, operator counts out: the one object every user of steadyscale drives.

    For each sample ``(volume, t)``, ``observe``

    1. refuses a ``volume`` that is not a finite number >= 0, or a ``t`` that is not a finite
       number greater than the previous ``t`` (``ValueError``, and nothing changes);
    2. filters it, ``filtered = filter.update(volume)`` (within the quiet period after an
       operation, with the policy's ``quiet_weight``: ``ThresholdPolicy.quiet_volume``);
    3. asks the policy, ``target = policy.needed(policy.demand(filtered, ...))``: for a sample
       that reports a ``backlog`` (a queue), the demand also looks ahead along the filtered
       volume's slope (smoothed over ``scaling.queue.SLOPE_MEMORY`` s), adds the headroom for the
       filter's own noise estimate (``sigma``, where the filter has one) and the restart time
       measured from the reports, and drains the backlog (``ThresholdPolicy.demand``); a
       volume-only sample asks for ``policy.needed(filtered)``, the paper's threshold;
    4. applies each guard in order, each to the previous one's output;
    5. for a job that reports its backlog (``scaling.queue``): sizes every operation for its
       own restart, ``policy.needed(policy.recovery(...))`` (a scale-up at least that big, for
       the backlog it finds when it lands, a scale-down no lower; ``operation_basis``), so
       that the backlog it finds and the restart's are served within the latency despite the
       noise; postpones an operation whose restart would find more backlog than it can delay
       and stay within the latency, while the running count keeps up (``held_for_restart``);
       spaces scale-downs when every restart is late by itself (``spaced_scale_down``); and
       holds scale-downs for ``policy.quiet`` seconds after the running count changed and
       after the first sample (``settling``); with ``running``, repeats a decision until it
       runs, for up to ``policy.quiet`` seconds (``awaiting``);
    6. brings the result into the policy's bounds, ``operators = policy.clamp(target)``;
    7. tells each guard what happened (``record``) and returns a ``Decision``.

    The bounds are hard limits applied after the guards, so the initial ``operators`` may lie
    outside them (it is the count actually running, e.g. a job started by hand): the first
    decision brings it within them whatever the guards say.

    Time is only ever the ``t`` passed in, in seconds from any origin; nothing reads a clock.
    The filter and the guards carry state: give each Scaler objects of its own.

    Parameters
    ----------
    filter
        The denoiser the samples go through.
    policy
        The threshold policy turning the filtered volume into an operator count.
    guards
        Guards applied in this order. Order matters: a guard sees the previous one's output,
        e.g. put ``stabilization`` before ``max_step`` (as Kubernetes does), otherwise the
        stabilisation window remembers the limited steps and holds every further step down.
    operators
        Operators running before the first sample, an integer >= 0.

    >>> from filters import make_filter
    >>> scaler = Scaler(make_filter("raw"), ThresholdPolicy(capacity=50.0),
    ...                 [make_guard("cooldown", down=60.0)], operators=2)
    >>> for t, volume in [(0.0, 90.0), (30.0, 160.0), (60.0, 90.0), (90.0, 40.0)]:
    ...     d = scaler.observe(volume, t)
    ...     print(d.operators, d.action, d.reason)
    2 none filtered 90.0 needs 2 = 2
    4 up filtered 160.0 needs 4 > 2
    4 none filtered 90.0 needs 2 < 4; held by cooldown: last scale-up 30 s ago < 60 s
    1 down filtered 40.0 needs 1 < 4
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
        self._operators = int(operators)
        self._last_t: float | None = None
        self._changed_at: float | None = None  # t of the last change of the running count
        self._filtered: float | None = None  # the last filtered volume
        self._slope = 0.0  # its rate of change, tuples/s per second, smoothed over a minute
        # Longest seen from a change of the running count until processing resumed, s; None
        # until an operation has been watched (the policy's assumed ``restart`` stands in).
        self._restart: float | None = None
        # Longest seen from a decision to the job running it, s; None until one has landed.
        self._actuation: float | None = None
        self._started_at: float | None = None  # t of the first sample of a queue
        self._running: int | None = None  # the running count the last sample reported
        # Volumes summed, and counted, since the running count last changed.
        self._volume_sum, self._volume_count = 0.0, 0

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
        """Take the sample ``volume`` (tuples/s) at time ``t`` (seconds) and decide.

        What the job reports beyond its volume is optional: ``backlog`` (records waiting:
        consumer lag, queue length; drained over the policy's ``catch_up``), ``running`` (the
        operators actually running now: the decision and every guard reason from it instead of
        from the last decision, which may not have been applied) and ``processed`` (records/s
        processed, kept in the decision). Each is refused unless finite and >= 0 (``running``
        an integer), and nothing changes then. A sample with ``running`` and ``processed``
        measures the restart: the longest time from a change of the running count to the last
        sample, within the quiet period, in which the job had more than a second of work
        waiting and processed under half of its capacity. The first sample of a job that
        reports its backlog starts a quiet period, as a change of the count does: the Scaler
        has not seen how long the job has been running.
        """
        check_number("Scaler", "volume", volume, minimum=0)
        check_number("Scaler", "t", t)
        for name, value in (("backlog", backlog), ("processed", processed)):
            if value is not None:
                check_number("Scaler", name, value, minimum=0)
        if running is not None:
            check_number("Scaler", "running", running, minimum=0, integer=True)
        if self._last_t is not None and not t > self._last_t:
            reject("Scaler", "t", t, f"t must be greater than the previous t={self._last_t!r}")
        volume, t = float(volume), float(t)
        previous = self._operators if running is None else int(running)
        first = self._last_t is None
        # What runs changed: from when it shows or, for the decided count landing late, from the
        # last sample without it. A decision not yet running is no change; on the first sample
        # another count than the initial one is only news of what runs.
        decided = self._operators
        seen = decided if self._running is None else self._running
        moved = running is not None and not first and previous != seen
        if moved:
            start = self._last_t if previous == decided and self._last_t is not None else t
            self._actuation = measure_actuation(
                self.policy, self._actuation, self._changed_at, start, previous == decided
            )
            self._changed_at = start if self._changed_at is None else max(self._changed_at, start)
            self._volume_sum, self._volume_count = 0.0, 0
        self._volume_sum += volume
        self._volume_count += 1
        self._running = None if running is None else previous
        if backlog is not None and first:
            self._started_at = t  # the Scaler has not seen how long this queue has run
        filtered = self._filter(volume, t)
        spread = self.filter.spread
        policy = self.policy
        queue: dict[str, Any] = {}
        quiet = False
        # Seconds since the running count last changed or a queue's first sample, if any.
        marks = [mark for mark in (self._changed_at, self._started_at) if mark is not None]
        since = t - max(marks) if marks else None
        if backlog is not None:
            # A restart is measured once the decided count runs: before it lands the old count
            # processes as ever, which says nothing of what a restart stops.
            if processed is not None and self._changed_at is not None and previous == decided:
                self._restart = measure_restart(
                    policy, self._restart, t - self._changed_at, previous, backlog, processed
                )
            # Only a job that reports its backlog is sized as a queue; without one, the paper's
            # threshold on the level. The noise is the filter's own estimate, where it has one.
            restart = self.restart
            noise = self.filter.noise or 0.0  # none kept: the restart still needs its headroom
            queue = {"noise": noise, "slope": self._slope, "restart": restart}
            quiet = settling(policy, since, backlog, previous, processed)
        demand = policy.demand(filtered, None if quiet else backlog, **queue)
        if spread is not None:
            spread /= policy.utilisation
        target = policy.needed(demand)
        relation = ">" if target > previous else "<" if target < previous else "="
        wanted = f"filtered {filtered:.1f}"
        if demand != filtered:
            terms = demand_terms(policy, filtered, None if quiet else backlog, **queue)
            wanted = f"demand {demand:.1f} ({wanted}{terms})"
        reasons = [f"{wanted} needs {target} {relation} {previous}"]
        given = []
        for guard in self.guards:
            given.append(target)
            target, reason = guard.apply(
                target, current=previous, filtered=demand, t=t, policy=policy, spread=spread
            )
            if reason is not None:
                reasons.append(reason)
        if backlog is not None:
            landing = max(self._actuation or 0.0, policy.lead)
            mean = self._volume_sum / self._volume_count
            found, level = operation_basis(
                policy, target, previous, backlog, filtered, self._slope, mean, landing, reasons
            )
            target = queue_target(
                policy, target, previous, found, level, noise, restart, reasons, since
            )
        if quiet and target < previous:
            reasons.append(
                f"held: {since:g} s after a scaling operation or the first sample < quiet "
                f"{policy.quiet:g} s"
            )
            target = previous
        if running is not None and not moved and self._changed_at is not None:
            target = awaiting(policy, target, decided, previous, t - self._changed_at, reasons)
        operators = policy.clamp(target)
        if operators > target:
            reasons.append(f"raised to min_operators={operators}")
        elif operators < target:
            reasons.append(f"lowered to max_operators={operators}")
        for guard, guard_target in zip(self.guards, given, strict=True):
            guard.record(previous, operators, t, target=guard_target)
        if operators != previous and operators != decided:
            self._changed_at = t
            self._volume_sum, self._volume_count = 0.0, 0
        self._operators, self._last_t = operators, t
        action: Action = (
            "up" if operators > previous else "down" if operators < previous else "none"
        )
        return Decision(
            t,
            volume,
            filtered,
            previous,
            operators,
            action,
            "; ".join(reasons),
            backlog=None if backlog is None else float(backlog),
            running=None if running is None else int(running),
            processed=None if processed is None else float(processed),
        )

    @property
    def restart(self) -> float:
        """Seconds an operation is planned to stop processing: the longest measured, or the
        policy's assumed ``restart`` until the Scaler has watched an operation."""
        return self.policy.restart if self._restart is None else self._restart

    def _filter(self, volume: float, t: float) -> float:
        """The level after a sample, as much of it as ``policy.quiet_volume`` gives; the slope."""
        level, since = self._filtered, None if self._changed_at is None else t - self._changed_at
        sample = self.policy.quiet_volume(volume, level, since)
        filtered = level if sample is None else self.filter.update(sample)
        assert filtered is not None  # a sample is only ignored once there is a level
        if level is not None and self._last_t is not None:
            self._slope = smoothed_slope(self._slope, filtered - level, t - self._last_t)
        self._filtered = filtered
        return filtered

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
        level: it estimates the noise, and decides from how uncertain its level is compared
        with one operator's capacity. With a ``"filter"`` and no ``"guards"``, there are none.

        Raises ``ValueError`` naming what is wrong and what is allowed.

        >>> spec = {"filter": {"name": "tvd", "lam": 40.0}, "policy": {"capacity": 50.0},
        ...         "guards": [{"name": "cooldown", "down": 120.0}]}
        >>> Scaler.from_spec(spec, operators=3).operators
        3
        >>> default = Scaler.from_spec({"policy": {"capacity": 50.0}})
        >>> default.filter.spec["resolution"], [guard.name for guard in default.guards]
        (50.0, ['confidence'])
        """
        if not isinstance(spec, dict) or not {"policy"} <= set(spec) <= _SPEC_KEYS:
            allowed = (
                "spec must be a dict with the key 'policy' and optionally 'filter' and 'guards' "
                "(left out: the recommended default)"
            )
            reject("Scaler", "spec", spec, allowed)
        policy = ThresholdPolicy.from_settings(spec["policy"])
        if "filter" in spec:
            filter_spec, guards = spec["filter"], spec.get("guards", [])
        else:
            default = default_spec(policy.capacity)
            filter_spec, guards = default["filter"], spec.get("guards", default["guards"])
        if not isinstance(guards, list | tuple):
            reject("Scaler", "guards", guards, "guards must be a list of specs")
        return cls(make_filter(filter_spec), policy, [make_guard(g) for g in guards], operators)

    def state_dict(self) -> dict[str, Any]:
        """Spec, filter and guard states, operators and last ``t``, as JSON-serialisable values."""
        return {
            "spec": self.spec,
            "filter": self.filter.state_dict(),
            "guards": [guard.state_dict() for guard in self.guards],
            "operators": self._operators,
            "t": self._last_t,
            "changed_at": self._changed_at,
            "filtered": self._filtered,
            "slope": self._slope,
            "restart": self._restart,
            "actuation": self._actuation,
            "started_at": self._started_at,
            "running": self._running,
            "volume_sum": self._volume_sum,
            "volume_count": self._volume_count,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue exactly from a state taken by ``state_dict()`` of a Scaler with this spec.

        Raises ``ValueError``, and changes nothing, when the spec differs or any part of the
        state is malformed.
        """
        state = checked(state, self.spec)
        guard_states = state["guards"]
        if not isinstance(guard_states, list | tuple) or len(guard_states) != len(self.guards):
            raise ValueError(f"state has guards={guard_states!r}, one state per guard expected")
        parts: list[tuple[Denoiser | Guard, Any]] = [
            (self.filter, state["filter"]),
            *zip(self.guards, guard_states, strict=True),
        ]
        # Loading into copies first raises on any malformed part while nothing here has changed.
        for part, part_state in parts:
            copy.deepcopy(part).load_state_dict(part_state)
        for part, part_state in parts:
            part.load_state_dict(part_state)
        self._operators = int(state["operators"])
        self._last_t = None if state["t"] is None else float(state["t"])
        self._changed_at = None if state["changed_at"] is None else float(state["changed_at"])
        self._filtered = None if state["filtered"] is None else float(state["filtered"])
        self._slope = float(state["slope"])
        self._restart = None if state["restart"] is None else float(state["restart"])
        self._actuation = None if state["actuation"] is None else float(state["actuation"])
        self._started_at = None if state["started_at"] is None else float(state["started_at"])
        self._running = None if state["running"] is None else int(state["running"])
        self._volume_sum = float(state["volume_sum"])
        self._volume_count = int(state["volume_count"])
