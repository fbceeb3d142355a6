"""What limits a decision after the policy: the guards a user asked for, then the bounds."""

from __future__ import annotations

from collections.abc import Sequence

from scaling.guards import Guard
from scaling.guards.base import Moment
from scaling.policy import ThresholdPolicy

Given = list[tuple[Guard, int]]  # each guard applied, and the count it was given
_new_tuple = tuple.__new__


def through_guards(
    guards: Sequence[Guard],
    target: int,
    previous: int,
    filtered: float,
    t: float,
    policy: ThresholdPolicy,
    spread: float | None,
    reasons: list[str],
    every: bool,
) -> tuple[int, Given]:
    """``target`` through ``guards`` in order (``every``: also those deciding from the filter's
    spread, which a cost-model decision prices itself), what each said in ``reasons``, and what
    each was given (for ``within_bounds`` to tell them what happened)."""
    given: Given = []
    # What each guard is told besides the target, the same for all: built once, by the tuple's
    # own constructor, which the NamedTuple's generated __new__ only calls (1.5 K of a
    # decision's instructions; issue 32).
    now = _new_tuple(Moment, (previous, filtered, t, policy, spread))
    for guard in guards:
        if not every and guard.needs_spread:
            continue
        given.append((guard, target))
        target, reason = guard.decide(target, now)
        if reason is not None:
            reasons.append(reason)
    return target, given


def within_bounds(
    policy: ThresholdPolicy, target: int, previous: int, t: float, reasons: list[str], given: Given
) -> int:
    """``target`` within the policy's bounds, said in ``reasons``; each guard told the outcome.

    >>> within_bounds(ThresholdPolicy(capacity=50.0, max_operators=4), 6, 3, 0.0, [], [])
    4
    """
    operators = policy.clamp(target)
    if operators > target:
        reasons.append(f"raised to min_operators={operators}")
    elif operators < target:
        reasons.append(f"lowered to max_operators={operators}")
    for guard, guard_target in given:
        guard.record(previous, operators, t, target=guard_target)
    return operators
