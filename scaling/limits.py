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
    landing: int | None = None,
) -> tuple[int, Given, int]:
    """``target`` through ``guards`` in order (``every``: also those deciding from the filter's
    spread, which a cost-model decision prices itself), what each said in ``reasons``, what
    each was given, and the count the outcome is from (for ``within_bounds`` to tell them).

    ``landing`` is the count decided earlier and not running yet, if any. A target equal to it
    is that operation confirmed, not a new one: it was guarded when decided, so no guard is
    asked again (judged against the ``previous`` count still running, a cooldown would cancel
    the scale-down it had just let through), and each is told of it as no change from
    ``landing`` (a stabilisation window still hears the recommendation, a cooldown no new
    operation).

    >>> from scaling.guards import make_guard
    >>> cooldown, policy = [make_guard("cooldown", down=60.0)], ThresholdPolicy(capacity=50.0)
    >>> cooldown[0].record(3, 1, 0.0, target=1)  # 3 -> 1 decided at t = 0
    >>> through_guards(cooldown, 1, 3, 50.0, 1.0, policy, None, [], True, landing=1)[::2]
    (1, 1)
    >>> through_guards(cooldown, 1, 3, 50.0, 1.0, policy, None, [], True)[::2]  # as if new
    (3, 3)
    """
    given: Given = []
    if landing is not None and target == landing != previous:
        given = [(guard, target) for guard in guards if every or not guard.needs_spread]
        return target, given, landing
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
    return target, given, previous


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
