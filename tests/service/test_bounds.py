"""The bounds check's quick path for floats accepts and refuses what the general one does."""

from __future__ import annotations

import math
import random

import pytest

from service.bounds import in_bounds


def plain(value: object, allowed: str, minimum: float, maximum: float) -> object:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if not is_number or not minimum <= value <= maximum:  # type: ignore[operator]
        raise ValueError(allowed)
    return float(value)  # type: ignore[arg-type]


def outcome(check: object, value: object, minimum: float, maximum: float) -> object:
    try:
        return ("kept", repr(check(value, "allowed", minimum, maximum)))  # type: ignore[operator]
    except ValueError as error:
        return ("refused", str(error))


@pytest.mark.parametrize("bounds", ((0.0, 1e12), (-1e15, 1e15), (1e-3, 1e12), (0, 10**9)))
def test_floats_and_everything_else_come_out_as_the_general_check_says(
    bounds: tuple[float, float],
) -> None:
    low, high = bounds
    chance = random.Random(repr(bounds))
    edges = [low, high, -0.0, 0.0, math.nextafter(low, -math.inf), math.nextafter(high, math.inf)]
    odd = [math.nan, math.inf, -math.inf, True, False, "1.0", None, 10**400, -(10**400), 3, -3]
    values = edges + odd + [chance.uniform(-2 * high, 2 * high) for _ in range(500)]
    for value in values:
        assert outcome(in_bounds, value, low, high) == outcome(plain, value, low, high)
