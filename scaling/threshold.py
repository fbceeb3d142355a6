"""A stream of volumes alone decides as the paper does: the count the filtered volume needs
(``ThresholdPolicy.needed``), then the guards in order, then the bounds."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from scaling.decision import reason_code
from scaling.guards import Guard
from scaling.limits import through_guards, within_bounds
from scaling.policy import ROUNDING_TOLERANCE, ThresholdPolicy


def threshold_decision(
    policy: ThresholdPolicy,
    guards: Sequence[Guard],
    filtered: float,
    spread: float | None,
    previous: int,
    t: float,
    landing: int | None,
) -> tuple[int, str, str, dict[str, Any]]:
    """The count, its reason code, the prose and the record for the filtered volume
    ``filtered`` (its standard error ``spread``) at ``t`` with ``previous`` operators running;
    ``landing``: the count of a decision not yet running (``None``: none).

    >>> threshold_decision(ThresholdPolicy(capacity=50.0), (), 312.4, None, 6, 3.0, None)[:3]
    (7, 'ScaledUp', 'filtered 312.4 needs 7 > 6')
    """
    needed = policy.needed(filtered)
    relation = ">" if needed > previous else "<" if needed < previous else "="
    reasons = [f"filtered {filtered:.1f} needs {needed} {relation} {previous}"]
    target, given, since = through_guards(
        guards, needed, previous, filtered, t, policy, spread, reasons, True, landing
    )
    explain = {
        "model": "threshold",
        "inputs": {"filtered": filtered, "spread": spread},
        "needed": needed,
    }
    operators = within_bounds(policy, target, since, t, reasons, given)
    unbounded = math.ceil(filtered / policy.capacity - ROUNDING_TOLERANCE)
    bounded = operators != target or needed != unbounded
    pending = operators == landing != previous
    code = reason_code(operators, previous, pending, needed, target != needed, bounded)
    return operators, code, "; ".join(reasons), explain
