"""How often the choice's downhill search finds the cheapest count, against pricing them all.

    .venv/bin/python -m benchmarks.choice_search            # 400 random outlooks, seed 7

Each outlook draws a level (50-800 records/s), its error, an excess, a slope, the noise, a
backlog (none, up to 5,000, or up to 200,000), the running count, the actuation delay (0-120 s)
and the restart (0-60 s); ``scaling.choice.choose`` (default prices, capacity 50) is compared
with the cheapest of every count from 0 to 599. Prints how many choices cost within 0.1 % of
the cheapest, the worst misses, and how many counts the search priced (median, most).
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

from scaling.choice import choose
from scaling.cost import Pricer
from scaling.outlook import Outlook
from scaling.policy import ThresholdPolicy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--outlooks", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    policy = ThresholdPolicy(capacity=50.0)
    misses, priced = [], []
    for _ in range(args.outlooks):
        backlog = rng.choice([0.0, rng.uniform(0, 5000), rng.uniform(0, 2e5)])
        outlook = Outlook(
            level=float(rng.uniform(50, 800)),
            level_error=float(rng.uniform(0, 60)),
            excess=float(rng.normal(0, 40)),
            slope=float(rng.normal(0, 1)),
            variance=float(rng.uniform(5, 500)) ** 2,
            backlog=float(backlog),
            running=int(rng.integers(0, 25)),
            landing=float(rng.choice([0, 5, 30, 60, 120])),
            restart=float(rng.choice([0, 4, 8, 20, 60])),
        )
        choice = choose(outlook, policy)
        priced.append(len(choice.pricer.priced))
        every = Pricer(outlook, policy.prices)
        cheapest = min(every.terms(n).total for n in range(600))
        found = choice.pricer.terms(choice.operators).total
        if found > cheapest * 1.001 + 1e-6:
            misses.append(found / cheapest)
    within = args.outlooks - len(misses)
    worst = ", ".join(f"{ratio:.3f}" for ratio in sorted(misses, reverse=True)[:5]) or "none"
    print(f"{within} of {args.outlooks} choices within 0.1 % of the cheapest; worst: {worst} x")
    print(f"counts priced per choice: median {statistics.median(priced):g}, most {max(priced)}")


if __name__ == "__main__":
    main()
