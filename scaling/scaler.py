"""The Scaler: a denoiser, a threshold policy and guards, turning samples into decisions."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from typing import Any

from filters import Denoiser, make_filter
from filters.base import check_number
from scaling.decision import Action, Decision
from scaling.guards import Guard, make_guard
from scaling.policy import ThresholdPolicy


class Scaler:
    """Volume samples in, operator counts out: the one object every user of steadyscale drives.

    For each sample ``(volume, t)``, ``observe``

    1. refuses a ``volume`` that is not a finite number >= 0, or a ``t`` that is not a finite
       number greater than the previous ``t`` (``ValueError``, and nothing changes);
    2. filters it, ``filtered = filter.update(volume)``;
    3. asks the policy, ``target = policy.needed(filtered)``;
    4. applies each guard in order, each to the previous one's output;
    5. brings the result into the policy's bounds, ``operators = policy.clamp(target)``;
    6. tells each guard what happened (``record``) and returns a ``Decision``.

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
        check_number("Scaler", "operators", operators, minimum=0, integer=True)
        self.filter = filter
        self.policy = policy
        self.guards = tuple(guards)
        self._operators = int(operators)
        self._last_t: float | None = None

    @property
    def operators(self) -> int:
        """Operators running after the last decision (the initial count before any)."""
        return self._operators

    def observe(self, volume: float, t: float) -> Decision:
        """Take the sample ``volume`` (tuples/s) at time ``t`` (seconds) and decide."""
        check_number("Scaler", "volume", volume, minimum=0)
        check_number("Scaler", "t", t)
        if self._last_t is not None and not t > self._last_t:
            raise ValueError(
                f"Scaler: t={t!r} is not allowed: t must be greater than the previous "
                f"t={self._last_t!r}"
            )
        volume, t = float(volume), float(t)
        filtered = self.filter.update(volume)
        previous = self._operators
        target = self.policy.needed(filtered)
        relation = ">" if target > previous else "<" if target < previous else "="
        reasons = [f"filtered {filtered:.1f} needs {target} {relation} {previous}"]
        given = []
        for guard in self.guards:
            given.append(target)
            target, reason = guard.apply(
                target, current=previous, filtered=filtered, t=t, policy=self.policy
            )
            if reason is not None:
                reasons.append(reason)
        operators = self.policy.clamp(target)
        if operators > target:
            reasons.append(f"raised to min_operators={operators}")
        elif operators < target:
            reasons.append(f"lowered to max_operators={operators}")
        for guard, guard_target in zip(self.guards, given, strict=True):
            guard.record(previous, operators, t, target=guard_target)
        self._operators, self._last_t = operators, t
        action: Action = (
            "up" if operators > previous else "down" if operators < previous else "none"
        )
        return Decision(t, volume, filtered, previous, operators, action, "; ".join(reasons))

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
        """Build a fresh Scaler from a ``spec`` (``"guards"`` may be left out).

        Raises ``ValueError`` naming what is wrong and what is allowed.

        >>> spec = {"filter": {"name": "tvd", "lam": 40.0}, "policy": {"capacity": 50.0},
        ...         "guards": [{"name": "cooldown", "down": 120.0}]}
        >>> Scaler.from_spec(spec, operators=3).operators
        3
        """
        required = {"filter", "policy"}
        if not isinstance(spec, dict) or not required <= set(spec) <= required | {"guards"}:
            raise ValueError(
                f"spec={spec!r} is not allowed: spec must be a dict with the keys 'filter', "
                "'policy' and optionally 'guards'"
            )
        policy, guards = spec["policy"], spec.get("guards", [])
        try:
            inspect.signature(ThresholdPolicy).bind(**policy)
        except TypeError as error:
            allowed = list(inspect.signature(ThresholdPolicy).parameters)
            raise ValueError(
                f"policy={policy!r} is not allowed: {error}; allowed parameters: {allowed} "
                "(capacity is required)"
            ) from None
        if not isinstance(guards, list | tuple):
            raise ValueError(f"guards={guards!r} is not allowed: guards must be a list of specs")
        return cls(
            make_filter(spec["filter"]),
            ThresholdPolicy(**policy),
            [make_guard(guard) for guard in guards],
            operators,
        )

    def state_dict(self) -> dict[str, Any]:
        """Spec, filter and guard states, operators and last ``t``, as JSON-serialisable values."""
        return {
            "spec": self.spec,
            "filter": self.filter.state_dict(),
            "guards": [guard.state_dict() for guard in self.guards],
            "operators": self._operators,
            "t": self._last_t,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue exactly from a state taken by ``state_dict()`` of a Scaler with this spec.

        Raises ``ValueError``, and changes nothing, when the spec differs or any part of the
        state is malformed.
        """
        fields = ["spec", "filter", "guards", "operators", "t"]
        if not isinstance(state, dict) or set(state) != set(fields):
            raise ValueError(f"state must be a dict with the keys {fields}")
        if state["spec"] != self.spec:
            raise ValueError(f"state was taken from {state['spec']!r}, not from {self.spec!r}")
        check_number("Scaler", "operators", state["operators"], minimum=0, integer=True)
        if state["t"] is not None:
            check_number("Scaler", "t", state["t"])
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
