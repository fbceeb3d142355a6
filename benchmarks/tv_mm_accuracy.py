"""How close ``filters.tv_mm`` gets to the exact TV solution, by iteration count.

Reference: Condat's exact direct solver, ``TVDCondat2013.tvd_2013`` (a test dependency).
Signals: piecewise-constant trends between 200 and 500 tuples/s (4–8 segments), 1,500 samples,
Gaussian noise of standard deviation σ, one signal per seed. For every σ, ``lam`` and iteration
count the table gives, over the seeds:

* ``gap``: relative cost gap (J(x) − J(x*)) / J(x*), maximum;
* ``max|x-x*|``: largest error anywhere in the solution, maximum;
* ``last p50`` / ``last max``: error of the last element, the value a causal filter outputs,
  median and maximum over 30 prefixes per signal (lengths 50, 100, ..., 1500), since a causal
  filter solves every prefix;
* ``ms``: time of one full 1,500-sample solve, median.

Run from the repository root: ``.venv/bin/python -m benchmarks.tv_mm_accuracy`` (about 20 s).
The module form keeps ``benchmarks/filters.py`` from shadowing the ``filters`` package.
"""

from __future__ import annotations

import time

import numpy as np
from TVDCondat2013 import tvd_2013

from filters.tv_mm import tv_mm

LENGTH = 1500
SEEDS = range(5)
SIGMAS = (35.0, 100.0, 350.0)
LAM_PER_SIGMA = (20.0, 40.0)
ITERATIONS = (10, 30, 100, 200, 300)
PREFIXES = range(50, LENGTH + 1, 50)


def piecewise_constant(rng: np.random.Generator) -> np.ndarray:
    """A trend of 4–8 segments at uniformly drawn levels between 200 and 500."""
    cuts = np.sort(rng.choice(np.arange(100, LENGTH - 100), size=rng.integers(3, 8), replace=False))
    levels = rng.uniform(200.0, 500.0, size=cuts.size + 1)
    return np.repeat(levels, np.diff(np.concatenate(([0], cuts, [LENGTH]))))


def cost(y: np.ndarray, x: np.ndarray, lam: float) -> float:
    """J(x) = ½‖y − x‖² + lam·Σ|x[i+1] − x[i]|."""
    return float(0.5 * np.sum((y - x) ** 2) + lam * np.sum(np.abs(np.diff(x))))


def main() -> None:
    header = ("sigma", "lam", "iters", "gap", "max|x-x*|", "last p50", "last max", "ms")
    print("{:>6} {:>6} {:>5} {:>9} {:>10} {:>9} {:>9} {:>6}".format(*header))
    for sigma in SIGMAS:
        for ratio in LAM_PER_SIGMA:
            lam = ratio * sigma
            signals = []
            for seed in SEEDS:
                rng = np.random.default_rng(seed)
                signals.append(piecewise_constant(rng) + rng.normal(0.0, sigma, LENGTH))
            for iterations in ITERATIONS:
                gaps, errors, last_errors, times = [], [], [], []
                for y in signals:
                    start = time.perf_counter()
                    x = tv_mm(y, lam, iterations)
                    times.append(time.perf_counter() - start)
                    exact = tvd_2013(y, lam)
                    gaps.append((cost(y, x, lam) - cost(y, exact, lam)) / cost(y, exact, lam))
                    errors.append(np.max(np.abs(x - exact)))
                    for end in PREFIXES:
                        prefix = y[:end]
                        last = tv_mm(prefix, lam, iterations)[-1] - tvd_2013(prefix, lam)[-1]
                        last_errors.append(abs(last))
                print(
                    f"{sigma:6g} {lam:6g} {iterations:5d} {max(gaps):9.1e} {max(errors):10.3g}"
                    f" {np.median(last_errors):9.2g} {max(last_errors):9.2g}"
                    f" {1e3 * np.median(times):6.2f}"
                )


if __name__ == "__main__":
    main()
