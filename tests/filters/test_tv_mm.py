"""The MM solver against Condat's exact solver, and its edge cases and validation.

Tolerances come from measuring the default 100 iterations on these flat, step and ramp trends
with σ = 100, lam in {20σ, 40σ}, 5 seeds, every 100th prefix (``benchmarks/tv_mm_accuracy.py``
does the same on random piecewise-constant trends): relative cost gap at most 4.3e-4 (ramp,
lam = 40σ), last-element error at most 0.34. The tests allow 1e-3 and 1.0 (0.01σ). Both the
wrong cost scaling (lam doubled or halved) and stopping at 3 iterations break the second.
"""

from __future__ import annotations

import numpy as np
import pytest
from TVDCondat2013 import tvd_2013

from filters.tv_mm import tv_mm

LENGTH = 1500
SIGMA = 100.0
TIME = np.arange(LENGTH)
TRENDS = {
    "random": np.full(LENGTH, 350.0),
    "step": np.where(TIME < 900, 250.0, 450.0),
    "ramp": 200.0 + 300.0 * TIME / (LENGTH - 1),
}


def cost(y: np.ndarray, x: np.ndarray, lam: float) -> float:
    return float(0.5 * np.sum((y - x) ** 2) + lam * np.sum(np.abs(np.diff(x))))


def noisy(trend: np.ndarray, sigma: float = SIGMA, seed: int = 0) -> np.ndarray:
    return trend + np.random.default_rng(seed).normal(0.0, sigma, trend.size)


@pytest.mark.parametrize("lam", [20 * SIGMA, 40 * SIGMA])
@pytest.mark.parametrize("kind", sorted(TRENDS))
def test_close_to_the_exact_solution(kind: str, lam: float) -> None:
    y = noisy(TRENDS[kind])
    exact = tvd_2013(y, lam)
    gap = (cost(y, tv_mm(y, lam), lam) - cost(y, exact, lam)) / cost(y, exact, lam)
    assert 0 <= gap < 1e-3
    # A causal filter outputs the last element of the solution on every prefix.
    for end in range(100, LENGTH + 1, 100):
        assert tv_mm(y[:end], lam)[-1] == pytest.approx(
            tvd_2013(y[:end], lam)[-1], abs=0.01 * SIGMA
        )


def test_cost_is_the_one_with_the_half() -> None:
    # ½‖y − x‖² + lam·TV: each plateau moves lam / (its length) towards the other. Without the
    # ½ the answer would be [1, 1, 9, 9].
    assert tv_mm([0.0, 0.0, 10.0, 10.0], lam=1.0) == pytest.approx([0.5, 0.5, 9.5, 9.5])


def test_integer_counts_with_exact_ties_still_converge() -> None:
    # Equal neighbours give |Dx| = 0, a fixed point of MM; the exact solution is flat there too.
    y = np.round(noisy(TRENDS["step"] / 20.0, sigma=2.0))
    assert np.mean(np.diff(y) == 0) > 0.1
    lam = 40.0
    assert np.max(np.abs(tv_mm(y, lam) - tvd_2013(y, lam))) < 0.05 * lam


def test_more_iterations_lower_the_cost() -> None:
    y = noisy(TRENDS["step"])
    lam = 20 * SIGMA
    costs = [cost(y, tv_mm(y, lam, iterations=k), lam) for k in (1, 10, 30, 300)]
    assert costs == sorted(costs, reverse=True)
    assert costs[0] > costs[-1]


def test_lam_zero_returns_a_copy_of_y() -> None:
    y = noisy(TRENDS["step"])[:50]
    x = tv_mm(y, 0.0)
    assert np.array_equal(x, y)
    x[0] = -1.0
    assert y[0] != -1.0


@pytest.mark.parametrize("y", [[], [412.0]])
def test_signals_of_length_zero_and_one_come_back_unchanged(y: list[float]) -> None:
    assert tv_mm(y, 50.0).tolist() == y


def test_same_input_gives_bit_identical_output() -> None:
    y = noisy(TRENDS["ramp"])
    # The same values at another memory alignment must not change the arithmetic.
    shifted = np.empty(LENGTH + 1)
    shifted[1:] = y
    first = tv_mm(y, 2000.0)
    assert first.tobytes() == tv_mm(y.copy(), 2000.0).tobytes()
    assert first.tobytes() == tv_mm(shifted[1:], 2000.0).tobytes()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lam": -1.0}, "lam=-1.0 is not allowed: lam must be a number >= 0"),
        ({"lam": float("nan")}, "lam=nan is not allowed"),
        ({"lam": float("inf")}, "lam=inf is not allowed"),
        ({"lam": "40"}, "lam='40' is not allowed"),
        ({"lam": 40.0, "iterations": 0}, "iterations=0 is not allowed: iterations must be an"),
        ({"lam": 40.0, "iterations": 2.5}, "iterations=2.5 is not allowed"),
        ({"lam": 40.0, "iterations": True}, "iterations=True is not allowed"),
    ],
)
def test_invalid_parameters_are_named(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        tv_mm([1.0, 2.0, 3.0], **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("y", "message"),
    [([[1.0, 2.0]], "one-dimensional"), ([1.0, float("nan")], r"y\[1\]=nan is not allowed")],
)
def test_invalid_signals_are_named(y: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tv_mm(y, 40.0)  # type: ignore[arg-type]
