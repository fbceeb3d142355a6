"""The work a request may cost: a Scaler's CPU time per sample, estimated from its spec.

Every request that feeds samples to a Scaler (a batch, a what-if replay) is estimated before
any sample is fed: ``samples x sample_seconds(spec)``. Above the setting ``work_budget`` it is
refused (413 for a batch, 422 for a replay), saying how many samples fit. A configuration is
refused when it configures (PUT) if not even ``BATCH_IN_BUDGET`` samples fit: such a stream
could not take one minute of samples in one request.

The estimate is the Scaler's own cost (policy, guards, decision; the same for every filter)
plus the filter's, in CPU seconds per sample on the machine the constants were measured on,
rounded up (``python -m benchmarks.replay_cost`` measures them again, beside this estimate).
The costs that grow with a setting are modelled by it: tvd's ``method="mm"`` solves a banded
system over its window ``iterations`` times per sample.
"""

from __future__ import annotations

from typing import Any

# CPU seconds of Scaler work one request may cost, by default (the setting work_budget): a
# what-if replay of 20,000 samples (the most the dashboard draws) through ekf, the costliest
# filter but tvd's "mm", is estimated at 4.1 s.
WORK_BUDGET = 5.0

# CPU seconds per sample of the Scaler with the raw filter. Measured (benchmarks.replay_cost,
# docs/benchmarks.md): 10 µs best of 3, 18-21 µs on the same machine under load; the estimates
# below are 2-2.7 times the best and 1.04-1.06 times it for "mm".
SCALER_SECONDS = 25e-6

# CPU seconds per sample each filter adds to it (measured under load: changepoint with the
# default's confidence guard 30 µs; tvd's exact method with lam "auto" 32 µs; ekf 80-150 µs;
# the others under 5 µs, moving_median at w=10,000 included).
FILTER_SECONDS = {
    "raw": 0.0,
    "ewma": 2e-6,
    "moving_average": 3e-6,
    "moving_median": 5e-6,
    "changepoint": 40e-6,
    "tvd": 40e-6,
    "ekf": 180e-6,
}

# tvd method "mm", per iteration of a sample's solve: a fixed part and a part per sample of the
# window (measured 62 µs and 0.03 µs: 64 ms per sample at window 50 with 1,000 iterations,
# 0.9 ms at window 1,000 with 10).
MM_ITERATION_SECONDS = 70e-6
MM_WINDOW_SECONDS = 0.04e-6

# Samples a stream must be able to take in one request within the budget: a minute's worth at
# one sample a second, what a client buffers while the service restarts.
BATCH_IN_BUDGET = 60


def sample_seconds(spec: dict[str, Any]) -> float:
    """Estimated CPU seconds one sample costs a Scaler of ``spec`` (``Scaler.spec``).

    >>> sample_seconds({"filter": {"name": "raw"}})
    2.5e-05
    >>> round(sample_seconds({"filter": {"name": "tvd", "method": "mm", "window": 50,
    ...                                   "iterations": 1000}}), 3)
    0.072
    """
    filter_spec = spec["filter"]
    if filter_spec.get("method") == "mm":
        window = float(filter_spec.get("window") or 0)
        solve = MM_ITERATION_SECONDS + MM_WINDOW_SECONDS * window
        return SCALER_SECONDS + float(filter_spec.get("iterations", 100)) * solve
    # An unknown name cannot be built; the costliest filter's figure is the safe side anyway.
    return SCALER_SECONDS + FILTER_SECONDS.get(filter_spec["name"], max(FILTER_SECONDS.values()))


def samples_within(spec: dict[str, Any], budget: float) -> int:
    """The most samples a Scaler of ``spec`` takes within ``budget`` CPU seconds.

    >>> samples_within({"filter": {"name": "raw"}}, 1.0)
    40000
    """
    return int(budget / sample_seconds(spec) + 1e-9)
