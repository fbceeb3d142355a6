"""The volume-alone decision's shortcuts (issue 32) give what the plain code gives:
``ThresholdPolicy.needed`` skipping the general number check for a finite float,
``ThresholdPolicy.clamp`` comparing instead of calling ``max`` and ``min``, and the guards'
``Moment`` built by ``tuple.__new__``."""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Callable
from typing import Any

import pytest

from filters.base import check_number
from scaling import ThresholdPolicy
from scaling.guards.base import Moment
from scaling.limits import _new_tuple
from scaling.policy import ROUNDING_TOLERANCE


def plain_clamp(policy: ThresholdPolicy, operators: int) -> int:
    operators = max(policy.min_operators, operators)
    return operators if policy.max_operators is None else min(operators, policy.max_operators)


def plain_needed(policy: ThresholdPolicy, volume: float) -> int:
    check_number("ThresholdPolicy", "volume", volume)
    return plain_clamp(policy, math.ceil(volume / policy.capacity - ROUNDING_TOLERANCE))


def outcome(function: Callable[..., int], *args: Any) -> object:
    """What ``function(*args)`` returns, or the type and text of what it raises."""
    try:
        return function(*args)
    except (ValueError, ArithmeticError) as error:
        return type(error), str(error)


def policies(chance: random.Random) -> ThresholdPolicy:
    low = chance.choice([0, 1, 3, 10])
    high = chance.choice([None, low, low + 1, low + 50])
    return ThresholdPolicy(chance.choice([0.001, 1.0, 50.0, 0.3, 1e12]), low, high)


def test_needed_and_clamp_give_what_the_plain_versions_give() -> None:
    chance = random.Random(32)
    edges = [0.0, -0.0, 5e-324, 1e-300, 49.9, 50.0, 50.000001, 2.1, 1e12, sys.float_info.max]
    for _ in range(3000):
        policy = policies(chance)
        volume = chance.choice([*edges, chance.uniform(0, 1e4), chance.expovariate(1e-3)])
        assert outcome(policy.needed, volume) == outcome(plain_needed, policy, volume)
        count = chance.choice([0, 1, 2, 9, 10, 11, 60, 10**12, chance.randint(0, 100)])
        assert policy.clamp(count) == plain_clamp(policy, count)
        assert type(policy.clamp(count)) is int


@pytest.mark.parametrize("volume", [math.nan, math.inf, -math.inf, "300", True, None])
def test_needed_refuses_what_the_general_check_refuses(volume: object) -> None:
    policy = ThresholdPolicy(capacity=50.0)
    with pytest.raises(ValueError) as plain:
        plain_needed(policy, volume)  # type: ignore[arg-type]
    with pytest.raises(ValueError) as fast:
        policy.needed(volume)  # type: ignore[arg-type]
    assert str(fast.value) == str(plain.value)


def test_needed_takes_integers_as_before() -> None:
    policy = ThresholdPolicy(capacity=50.0)
    assert policy.needed(100) == plain_needed(policy, 100) == 2


def test_a_moment_built_by_the_tuple_constructor_is_the_named_tuple() -> None:
    values = (7, 296.1, 12.0, ThresholdPolicy(capacity=50.0), None)
    built, plain = _new_tuple(Moment, values), Moment(*values)
    assert type(built) is Moment and built == plain and built.policy is plain.policy
    assert built._asdict() == plain._asdict()
