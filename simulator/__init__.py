"""Workloads, noise at a given SNR, the simulation engine, metrics and reports.

>>> from filters import make_filter
>>> from scaling import Scaler, ThresholdPolicy
>>> trend = paper_workload(seed=1)
>>> noisy = add_noise(trend, snr=1.0, seed=1)
>>> scaler = Scaler(make_filter("tvd", lam=4000.0), ThresholdPolicy(capacity=50.0))
>>> result = simulate(scaler, noisy, trend=trend)
>>> sorted(result.metrics)
['operator_seconds', 'p_over', 'p_under', 's_down', 's_up']
"""

from __future__ import annotations

from simulator.model.catalog import WORKLOADS, make_workload
from simulator.model.engine import SimulationResult, simulate
from simulator.model.noise import add_noise, noise_std
from simulator.model.traces import trace_workload
from simulator.model.workloads import paper_workload

__all__ = [
    "WORKLOADS",
    "SimulationResult",
    "add_noise",
    "make_workload",
    "noise_std",
    "paper_workload",
    "simulate",
    "trace_workload",
]
