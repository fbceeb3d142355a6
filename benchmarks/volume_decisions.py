"""A fingerprint of volume-only decisions: the same on two versions means they decide alike.

    .venv/bin/python -m benchmarks.volume_decisions
    git worktree add /tmp/base 0b29a1d
    .venv/bin/python -m benchmarks.volume_decisions --base /tmp/base   # that version's packages

Five Scaler specs (the default, bounds, tvd + cooldown, moving average + stabilisation + max
step, raw + hysteresis) on the paper workload, seeds 1-3, SNR 0.5, 1 and 5 (power), from 5
operators: it prints how many runs and decisions, and the SHA-256 of every decided count in
order. ``--base DIR`` imports ``filters``, ``scaling`` and ``simulator`` from another checkout.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

SPECS = [
    {"policy": {"capacity": 50.0}},
    {"policy": {"capacity": 50.0, "max_operators": 9, "min_operators": 2}},
    {
        "filter": {"name": "tvd"},
        "policy": {"capacity": 50.0},
        "guards": [{"name": "cooldown", "down": 60.0}],
    },
    {
        "filter": {"name": "moving_average", "w": 30},
        "policy": {"capacity": 40.0},
        "guards": [{"name": "stabilization", "window": 120.0}, {"name": "max_step", "up": 2}],
    },
    {
        "filter": {"name": "raw"},
        "policy": {"capacity": 50.0},
        "guards": [{"name": "hysteresis", "band": 0.05}],
    },
]


def from_checkout(description: str) -> None:
    """Parse ``--base DIR``: with it, ``filters``, ``scaling`` and ``simulator`` are imported
    from that checkout (call it before importing them)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--base", help="a checkout whose packages decide instead of these")
    args = parser.parse_args()
    if args.base:
        sys.path.insert(0, args.base)


def main() -> None:
    from_checkout(__doc__.split("\n", 1)[0])
    from scaling import Scaler
    from simulator import add_noise, paper_workload

    runs = []
    for spec in SPECS:
        for seed in (1, 2, 3):
            for snr in (0.5, 1.0, 5.0):
                volumes = add_noise(paper_workload(seed), snr, seed)
                scaler = Scaler.from_spec(spec, operators=5)
                runs.append(
                    [scaler.observe(float(v), float(t)).operators for t, v in enumerate(volumes)]
                )
    digest = hashlib.sha256(json.dumps(runs).encode()).hexdigest()
    print(f"{len(runs)} runs, {sum(map(len, runs))} decisions, sha256 {digest}")


if __name__ == "__main__":
    main()
