"""The work budget's cost model against the cost measured: CPU seconds per sample of a Scaler,
as a what-if replay feeds it, beside ``service.budget.sample_seconds``'s estimate.

    .venv/bin/python -m benchmarks.replay_cost            # about 30 s
    .venv/bin/python -m benchmarks.replay_cost --samples 500

The estimate must not be below the measure by much on the machine the constants were measured
on: a request it underestimates works longer than the setting work_budget allows. Prints one
row per configuration: measured µs per sample (thread CPU time, best of 3), estimated µs, and
their ratio.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from service.budget import sample_seconds
from service.models import StreamConfig
from service.scalers import build_scaler

CONFIGS: list[dict[str, Any] | None] = [
    None,  # the default: changepoint and the confidence guard
    {"name": "raw"},
    {"name": "ewma", "alpha": 0.1},
    {"name": "moving_average", "w": 10_000},
    {"name": "moving_median", "w": 10_000},
    {"name": "tvd"},
    {"name": "ekf"},
    {"name": "ekf", "observation": "log"},
    {"name": "tvd", "lam": 10.0, "method": "mm", "window": 50, "iterations": 100},
    {"name": "tvd", "lam": 10.0, "method": "mm", "window": 1000, "iterations": 10},
]


def measured(filter_spec: dict[str, Any] | None, samples: int) -> tuple[float, float]:
    """Best-of-3 CPU seconds per sample of a fresh Scaler over ``samples`` noisy samples
    (past a filled window for the ``mm`` ones), and the budget's estimate."""
    config: dict[str, Any] = {"policy": {"capacity": 50.0}}
    if filter_spec is not None:
        config["filter"] = filter_spec
    count = samples
    if filter_spec is not None and filter_spec.get("method") == "mm":
        count = min(samples, int(filter_spec["window"]) + 20)
    volumes = np.clip(300.0 + 100.0 * np.random.default_rng(1).standard_normal(count), 0, None)
    best = float("inf")
    estimate = 0.0
    for _ in range(3):
        scaler = build_scaler(StreamConfig.model_validate(config))
        estimate = sample_seconds(scaler.spec)
        began = time.thread_time()
        for t, volume in enumerate(volumes.tolist()):
            scaler.observe(volume, float(t))
        best = min(best, (time.thread_time() - began) / count)
    return best, estimate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3000, help="samples per run (3000)")
    args = parser.parse_args()
    print("| filter | measured µs/sample | estimated µs/sample | estimated / measured |")
    print("|---|---:|---:|---:|")
    for spec in CONFIGS:
        seconds, estimate = measured(spec, args.samples)
        name = "default" if spec is None else ", ".join(f"{k}={v}" for k, v in spec.items())
        print(f"| {name} | {seconds * 1e6:.1f} | {estimate * 1e6:.1f} | {estimate / seconds:.2f} |")


if __name__ == "__main__":
    main()
