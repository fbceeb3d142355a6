"""Filter speed and memory, all measured in one run (ratios are what to compare across machines).

    .venv/bin/python -m benchmarks.filters            # full run, about 2 minutes
    .venv/bin/python -m benchmarks.filters --quick    # smaller sizes, a smoke test

(Run it as a module: ``python benchmarks/filters.py`` would import this file as ``filters``.)

Prints:
1. the per-sample update cost of every filter over 100,000 samples (``tvd`` with the fixed
   ``LAM`` and with its default noise-adaptive ``lam="auto"``), and its ratio to
   ``moving_average``'s;
2. the exact causal ``tvd`` against re-solving every prefix with an exact batch solver (the
   naive way to get the same outputs), at n = 1,500 and n = 20,000: our own exact batch solver
   (``filters.tvd.tv_denoise``, same language), Condat's C solver (package ``tvdcondat2013``,
   installed by the test extra) and the paper's MM solver;
3. the live knots (breakpoints) the exact ``tvd`` holds as the stream grows to 10^6 samples;
4. the size of each filter's state as JSON after 3,000 samples, and the time to take and
   serialise it (``json.dumps(f.state_dict())``), which the service does at every commit;
   ``--only state`` prints only this section.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np
from TVDCondat2013 import tvd_2013

from filters import make_filter
from filters.tv_mm import tv_mm
from filters.tvd import tv_denoise

NOISE_STD = 100.0
LAM = 20 * NOISE_STD
SPECS: list[dict[str, object]] = [
    {"name": "raw"},
    {"name": "moving_average", "w": 60},
    {"name": "moving_median", "w": 60},
    {"name": "ewma", "alpha": 0.05},
    {"name": "tvd", "lam": LAM},
    {"name": "tvd"},
    {"name": "ekf"},
    {"name": "ekf", "measurement_noise": NOISE_STD**2},
    {"name": "ekf", "observation": "log"},
    {"name": "tvd", "lam": LAM, "method": "mm", "window": 120, "iterations": 30},
]


def paper_like(n: int, seed: int = 1) -> np.ndarray:
    """Piecewise-constant 200-500 tuples/s, segments of 150 s, Gaussian noise (sigma 100)."""
    rng = np.random.default_rng(seed)
    trend = np.repeat(rng.uniform(200.0, 500.0, n // 150 + 1), 150)[:n]
    return np.clip(trend + rng.normal(0.0, NOISE_STD, n), 0.0, None)


def seconds(work: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def update_costs(n: int) -> None:
    print(f"\n1. Update cost per sample over n = {n:,} samples (best of 3, one update() call each)")
    samples = paper_like(n).tolist()
    costs = {}
    for spec in SPECS:
        size = n if spec.get("method") != "mm" else min(n, 2_000)

        def run(spec: dict[str, object] = spec, size: int = size) -> None:
            update = make_filter(spec).update
            for value in samples[:size]:
                update(value)

        costs[str(spec)] = seconds(run) / size
    baseline = costs[str(SPECS[1])]
    print(f"   {'filter':<75} {'us/sample':>10} {'x moving_average':>17}")
    for spec in SPECS:
        cost = costs[str(spec)]
        note = " (2,000 samples)" if spec.get("method") == "mm" else ""
        print(f"   {str(spec) + note:<75} {cost * 1e6:>10.2f} {cost / baseline:>17.1f}")


def prefix_resolve(n: int, sampled: int) -> None:
    print(f"\n2. Causal tvd vs re-solving every prefix, n = {n:,}, lam = {LAM:g}")
    y = paper_like(n)
    causal = seconds(lambda: make_filter("tvd", lam=LAM).filter(y))
    print(f"   causal tvd (all {n:,} outputs): {causal * 1e3:10.1f} ms")
    solvers: dict[str, Callable[[np.ndarray], object]] = {
        "exact batch DP, pure Python (filters.tvd.tv_denoise)": lambda p: tv_denoise(p, LAM),
        "Condat 2013, C (tvdcondat2013.tvd_2013)": lambda p: tvd_2013(p, LAM),
        "paper's MM, 30 iterations (filters.tv_mm.tv_mm)": lambda p: tv_mm(p, LAM, 30),
    }
    for label, solve in solvers.items():
        compiled = label.startswith("Condat")
        lengths = np.arange(1, n + 1) if compiled else np.unique(np.linspace(1, n, sampled))
        lengths = lengths.astype(int)
        cost = []
        for k in lengths:
            prefix = y[:k].copy()
            start = time.perf_counter()
            solve(prefix)
            cost.append(time.perf_counter() - start)
        # Sampled prefix lengths: integrate the measured cost per length over all lengths.
        total = float(np.sum(cost)) if compiled else float(np.trapezoid(cost, lengths))
        how = "every prefix timed" if compiled else f"{lengths.size} prefix lengths timed"
        print(
            f"   re-solve, {label:<55} {total * 1e3:10.1f} ms  ({how})"
            f"  -> causal is {total / causal:,.0f}x faster"
        )


def live_knots(n: int) -> None:
    print(f"\n3. Live knots held by the exact tvd (lam = {LAM:g}) as the stream grows")
    f = make_filter("tvd", lam=LAM)
    checkpoints = {10**k for k in range(3, 7) if 10**k <= n}
    peak = 0
    for index, value in enumerate(paper_like(n, seed=2).tolist(), start=1):
        f.update(value)
        peak = max(peak, f.knots)  # type: ignore[attr-defined]
        if index in checkpoints:
            print(f"   after {index:>9,} samples: {f.knots:3d} live, peak so far {peak:3d}")  # type: ignore[attr-defined]


def state_sizes(n: int) -> None:
    print(
        f"\n4. State after {n:,} samples: JSON size and json.dumps(state_dict()) time (best of 3)"
    )
    samples = paper_like(n).tolist()
    for spec in [*SPECS[:-1], {"name": "changepoint", "resolution": 50.0}]:
        f = make_filter(dict(spec))
        for value in samples:
            f.update(value)
        size = len(json.dumps(f.state_dict()))
        each = seconds(lambda f=f: [json.dumps(f.state_dict()) for _ in range(100)]) / 100
        print(f"   {json.dumps(spec):60s} {size:>8,} bytes {each * 1e6:8.1f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--only", choices=["state"], help="only that section")
    args = parser.parse_args()
    quick = args.quick
    print("steadyscale filter benchmark" + (" (quick)" if quick else ""))
    if args.only == "state":
        state_sizes(3_000)
        return
    update_costs(10_000 if quick else 100_000)
    for n in (1_500, 20_000) if not quick else (300,):
        prefix_resolve(n, sampled=40)
    live_knots(10_000 if quick else 1_000_000)
    state_sizes(3_000)


if __name__ == "__main__":
    main()
