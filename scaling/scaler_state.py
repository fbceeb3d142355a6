"""What a Scaler remembers beyond its parts, and the checks a stored state must pass."""

from __future__ import annotations

from typing import Any

from filters.base import check_number

# Every key of a state, in ``Scaler.state_dict``'s order.
PARTS = ["spec", "filter", "guards", "operators", "t"]
# Fields added later, and what a state saved before them loads as: nothing changed, no level
# seen, no slope, no restart or actuation delay measured, not a queue's first sample, no
# running count reported, no volume summed since the count last changed.
LATER: dict[str, Any] = {
    "changed_at": None,
    "filtered": None,
    "slope": 0.0,
    "restart": None,
    "actuation": None,
    "started_at": None,
    "running": None,
    "volume_sum": 0.0,
    "volume_count": 0,
}


def checked(state: object, spec: dict[str, Any]) -> dict[str, Any]:
    """``state`` with the later fields filled in, once every field but the parts' is checked.

    Raises ``ValueError`` naming the field, its value and what is allowed.

    >>> checked({"spec": {}, "filter": {}, "guards": [], "operators": 2, "t": 5.0}, {})["slope"]
    0.0
    """
    if not isinstance(state, dict) or not set(PARTS) <= set(state) <= {*PARTS, *LATER}:
        raise ValueError(f"state must be a dict with the keys {PARTS + list(LATER)}")
    state = {**LATER, **state}
    if state["spec"] != spec:
        raise ValueError(f"state was taken from {state['spec']!r}, not from {spec!r}")
    check_number("Scaler", "operators", state["operators"], minimum=0, integer=True)
    for field in ("t", "changed_at", "filtered", "slope", "started_at"):
        if state[field] is not None:
            check_number("Scaler", field, state[field])
    for field in ("restart", "actuation"):
        if state[field] is not None:
            check_number("Scaler", field, state[field], minimum=0)
    if state["running"] is not None:
        check_number("Scaler", "running", state["running"], minimum=0, integer=True)
    check_number("Scaler", "volume_count", state["volume_count"], minimum=0, integer=True)
    check_number("Scaler", "volume_sum", state["volume_sum"], minimum=0)
    return state
