"""The noise estimate's median distance, selected by bisection from any hint, is the plain
sort's float."""

from __future__ import annotations

import math
import random
import struct

import pytest

from filters.noise import _SCALE, NoiseEstimator, _median_distance, sorted_median


def plain(ordered: list[float]) -> float | None:
    """The estimate as first written: both runs of distances built, merged by sorting."""
    if len(ordered) < NoiseEstimator.min_differences:
        return None
    centre = sorted_median(ordered)
    half = len(ordered) // 2
    below = [centre - d for d in reversed(ordered[:half])]
    return _SCALE * sorted_median(sorted(below + [d - centre for d in ordered[half:]]))


def bits(value: float | None) -> bytes | None:
    # Compares -0.0 and 0.0 as different, as JSON would print them.
    return None if value is None else struct.pack("<d", value)


def samples(chance: random.Random, kind: str, count: int) -> list[float]:
    if kind == "ties":  # few values: most differences tie, many with the median
        return [float(chance.randrange(4)) for _ in range(count)]
    if kind == "zeros":  # differences of +0.0 and -0.0
        return [chance.choice((0.0, -0.0, 0.0, 1.0)) for _ in range(count)]
    if kind == "steps":  # a constant stretch, then noise: the estimate sits at 0, then leaves
        return [5.0] * (count // 2) + [chance.gauss(5.0, 2.0) for _ in range(count - count // 2)]
    return [chance.gauss(300.0, 50.0) for _ in range(count)]


@pytest.mark.parametrize("window", (8, 9, 10, 11, 16, 33, 120, 121))
@pytest.mark.parametrize("kind", ("ties", "zeros", "steps", "gauss"))
def test_every_estimate_is_the_plain_sorts_bit_for_bit(window: int, kind: str) -> None:
    chance = random.Random(f"{window}-{kind}")
    estimator = NoiseEstimator(window=window)
    # Three windows' worth: warming up, filling up, then sliding.
    for value in samples(chance, kind, 3 * window + 5):
        estimate = estimator.update(value)
        assert bits(estimate) == bits(plain(estimator._ordered))


@pytest.mark.parametrize("size", range(8, 40))
def test_the_bisection_picks_the_merges_middle_for_any_sorted_run(size: int) -> None:
    chance = random.Random(size)
    for trial in range(600):
        spread = (1, 3, 10, 1000)[trial % 4]
        ordered = sorted(float(chance.randrange(-spread, spread + 1)) for _ in range(size))
        if trial % 5 == 0:
            ordered = sorted(chance.uniform(-1.0, 1.0) for _ in range(size))
        if trial % 3 == 0:  # zeros of either sign, in any order among themselves
            ordered = [chance.choice((0.0, -0.0)) if d == 0 else d for d in ordered]
        centre = sorted_median(ordered)
        expected = bits(plain(ordered))
        distance, taken = _median_distance(ordered, centre)
        assert bits(_SCALE * distance) == expected
        # Whatever the last update's split was, the hint leads to the same one.
        for hint in range(size // 2 + 2):
            assert _median_distance(ordered, centre, hint) == (distance, taken)
            assert bits(_SCALE * _median_distance(ordered, centre, hint)[0]) == expected


@pytest.mark.parametrize("window", (8, 13, 120))
def test_a_restored_estimator_continues_with_the_same_estimates(window: int) -> None:
    chance = random.Random(window)
    values = samples(chance, "ties", window) + samples(chance, "gauss", 2 * window)
    for cut in (0, 1, 5, window, len(values) // 2, len(values) - 1):
        whole = NoiseEstimator(window=window)
        first = [whole.update(v) for v in values]
        part = NoiseEstimator(window=window)
        for value in values[:cut]:
            part.update(value)
        restored = NoiseEstimator(window=window)
        restored.load_state_dict(part.state_dict())
        assert bits(restored.sigma) == bits(part.sigma)
        rest = [restored.update(v) for v in values[cut:]]
        assert list(map(bits, rest)) == list(map(bits, first[cut:]))
        assert all(s is None or math.isfinite(s) for s in rest)
