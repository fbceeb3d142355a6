"""What a Scaler remembers beyond its parts, the checks a stored state must pass, and loading its
parts all or none."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from filters import Denoiser
from filters.base import check_number
from scaling.cadence import INTERVALS
from scaling.guards import Guard
from scaling.legacy import mapped_settings
from scaling.policy import LATE_PRICE

# Every key of a state, in ``Scaler.state_dict``'s order.
PARTS = ["spec", "filter", "guards", "operators", "t"]
# Fields added later, and what a state saved before them loads as: a one-second interval, the
# last interval as the cadence's only one (``scaling.cadence``; none before any), no level
# seen, no slope, no excess over it (nor its square), no wander, no running count reported, no
# decision pending, no change of the running count seen, no restart under way (its direction,
# were one under way, a scale-up's), no operation's late seconds being counted, nothing
# measured (a measurement stored without a direction counts for both: ``scaling.measure``).
LATER: dict[str, Any] = {
    "interval": 1.0,
    "intervals": None,
    "filtered": None,
    "slope": 0.0,
    "excess": 0.0,
    "missed": 0.0,
    "wander": 0.0,
    "running": None,
    "decided_at": None,
    "changed_at": None,
    "restart_now": None,
    "direction": 1,
    "restarts": [],
    "actuations": [],
    "late_since": None,
    "late_now": 0.0,
    "lates": [],
}
# Fields of states from before the cost model (scaling.legacy), and what becomes of them: the
# longest restart and actuation delay measured become one recent measurement each, taken at
# the state's t; the rest (the queue's first sample, the volume summed since the last change)
# fed rules the model replaced.
BEFORE = ["restart", "actuation", "started_at", "volume_sum", "volume_count"]


def checked(state: object, spec: dict[str, Any]) -> dict[str, Any]:
    """``state`` with the later fields filled in, once every field but the parts' is checked.

    A state from before the cost model is mapped (see ``BEFORE``), its spec's policy too
    (``scaling.legacy.mapped_settings``). Raises ``ValueError`` naming the field, its value and
    what is allowed.

    >>> checked({"spec": {}, "filter": {}, "guards": [], "operators": 2, "t": 5.0}, {})["slope"]
    0.0
    >>> old = {"spec": {}, "filter": {}, "guards": [], "operators": 2, "t": 5.0, "restart": 12.0}
    >>> checked(old, {})["restarts"]
    [[5.0, 12.0]]
    """
    if not isinstance(state, dict) or not set(PARTS) <= set(state) <= {*PARTS, *LATER, *BEFORE}:
        raise ValueError(f"state must be a dict with the keys {PARTS + list(LATER)}")
    state = {**LATER, **state}
    stored = state["spec"]
    if isinstance(stored, dict) and isinstance(stored.get("policy"), dict):
        stored = {**stored, "policy": stated_default(mapped_settings(stored["policy"]), spec)}
    if stored != spec:
        raise ValueError(f"state was taken from {state['spec']!r}, not from {spec!r}")
    check_number("Scaler", "operators", state["operators"], minimum=0, integer=True)
    for field in ("t", "filtered", "slope", "excess", "decided_at", "changed_at", "late_since"):
        if state[field] is not None:
            check_number("Scaler", field, state[field])
    check_number("Scaler", "interval", state["interval"], minimum=0, exclusive_minimum=True)
    if state["intervals"] is None:  # before the cadence: the one interval it kept
        state["intervals"] = [] if state["t"] is None else [state["interval"]]
    if not isinstance(state["intervals"], list) or len(state["intervals"]) > INTERVALS:
        raise ValueError(
            f"state has intervals={str(state['intervals'])[:80]}: a list of at most "
            f"{INTERVALS} intervals (seconds > 0)"
        )
    for interval in state["intervals"]:
        check_number("Scaler", "intervals", interval, minimum=0, exclusive_minimum=True)
    for field in ("missed", "wander", "late_now"):
        check_number("Scaler", field, state[field], minimum=0)
    for field in ("restart_now", "restart", "actuation"):
        if state.get(field) is not None:
            check_number("Scaler", field, state[field], minimum=0)
    for old, new in (("restart", "restarts"), ("actuation", "actuations")):
        if state.get(old) is not None and state["t"] is not None:
            state[new] = [[state["t"], state[old]]]
    if state["direction"] not in (1, -1) or isinstance(state["direction"], bool):
        raise ValueError(f"state has direction={state['direction']!r}: 1 (up) or -1 (down)")
    for field in ("restarts", "actuations", "lates"):
        pairs = state[field]
        # A restart may carry its direction (1 up, -1 down), a delay or late seconds not.
        sizes = (2, 3) if field == "restarts" else (2,)
        if not isinstance(pairs, list) or not all(
            isinstance(pair, list | tuple)
            and len(pair) in sizes
            and all(way in (1, -1) and not isinstance(way, bool) for way in pair[2:])
            for pair in pairs
        ):
            shape = "[t, seconds] pairs"
            if field == "restarts":
                shape = "[t, seconds] or [t, seconds, direction] entries (direction 1 or -1)"
            raise ValueError(f"state has {field}={pairs!r}: a list of {shape}")
        for when, seconds, *_ in pairs:
            check_number("Scaler", field, when)
            check_number("Scaler", field, seconds, minimum=0)
    if state["running"] is not None:
        check_number("Scaler", "running", state["running"], minimum=0, integer=True)
    return state


def load_parts(filter: Denoiser, guards: Sequence[Guard], state: dict[str, Any]) -> None:
    """Load the filter's and each guard's state from a ``checked`` state: all of them, or, when
    any part is malformed, none (``ValueError``)."""
    guard_states = state["guards"]
    if not isinstance(guard_states, list | tuple) or len(guard_states) != len(guards):
        raise ValueError(f"state has guards={guard_states!r}, one state per guard expected")
    parts: list[tuple[Denoiser | Guard, Any]] = [
        (filter, state["filter"]),
        *zip(guards, guard_states, strict=True),
    ]
    # Loading into copies first raises on any malformed part while nothing here has changed.
    for part, part_state in parts:
        copy.deepcopy(part).load_state_dict(part_state)
    for part, part_state in parts:
        part.load_state_dict(part_state)


def optional(value: Any) -> float | None:
    """``value`` as a float, or ``None``: a stored state's optional times and durations."""
    return None if value is None else float(value)


def stated_default(stored: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """A stored policy's settings with a ``late_price`` of 1,000 that was stated put back.

    Before session 23 a policy's spec left out a late price equal to the default, stated or
    not; now a stated one stays in it (an unstated one is capped where restarts are long:
    ``ThresholdPolicy.late_price_for``). A state stored then, for a spec that states 1,000,
    lacks it: it is the same policy, and loads.

    >>> stated_default({"capacity": 50.0}, {"policy": {"capacity": 50.0, "late_price": 1000.0}})
    {'capacity': 50.0, 'late_price': 1000.0}
    """
    policy = spec.get("policy") if isinstance(spec, dict) else None
    if (
        isinstance(policy, dict)
        and policy.get("late_price") == LATE_PRICE
        and "late_price" not in stored
        and "late_probability" not in stored
    ):
        return {**stored, "late_price": LATE_PRICE}
    return stored


def same_spec(stored: dict[str, Any], spec: dict[str, Any]) -> bool:
    """Whether a Scaler spec stored earlier is ``spec``, perhaps spelled as before session 23
    (``stated_default``): a stream PUT again with its configuration is the same stream.

    >>> stated = {"policy": {"capacity": 50.0, "late_price": 1000.0}}
    >>> same_spec({"policy": {"capacity": 50.0}}, stated), same_spec({"policy": {}}, stated)
    (True, False)
    """
    if stored == spec or not isinstance(stored.get("policy"), dict):
        return stored == spec
    return {**stored, "policy": stated_default(stored["policy"], spec)} == spec
