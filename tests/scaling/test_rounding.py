"""scaling.rounding: the record's numbers rounded as ``round`` rounds them, bit for bit."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from scaling.rounding import LARGEST, rounded


def same(a: float, b: float) -> bool:
    """The same float, zeros' signs and NaN included."""
    return (math.isnan(a) and math.isnan(b)) or (
        a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    )


def test_random_values_round_as_round_rounds_them() -> None:
    rng = random.Random(30)
    for _ in range(200_000):
        value = rng.choice(
            [
                rng.uniform(-1e4, 1e6),
                rng.uniform(-1.0, 1.0),
                rng.uniform(-1e-3, 1e-3),
                math.ldexp(rng.random(), rng.randint(-60, 70)) * rng.choice([1.0, -1.0]),
                rng.randint(-(10**7), 10**7) / 1000.0,  # decimals of three places
                (rng.randint(-(10**7), 10**7) + 0.5) / 1000.0,  # and the ties between them
                (rng.randint(-(10**7), 10**7) + 0.5) / 10000.0,
            ]
        )
        digits = rng.choice([3, 4, rng.randint(0, 9)])
        assert same(rounded(value, digits), round(value, digits)), (value, digits)


@pytest.mark.parametrize(
    "value",
    [0.0, -0.0, 0.0004, -0.0004, 0.0005, -0.0005, 0.0015, 2.675, 1e300, -1e300, math.inf,
     -math.inf, math.nan, LARGEST / 1000.0, 5e-324, 123456.7895, 0.1 + 0.2],
)  # fmt: skip
def test_edges_round_as_round_rounds_them(value: float) -> None:
    for digits in range(10):
        assert same(rounded(value, digits), round(value, digits))


@pytest.mark.parametrize("value", [30, -7, 0, True, np.float64(2.0625), np.float32(1.5), 2**70])
def test_numbers_other_than_floats_round_as_round_rounds_them(value: float) -> None:
    for digits in (0, 3, 4):
        result, expected = rounded(value, digits), round(value, digits)
        assert type(result) is type(expected) and result == expected
