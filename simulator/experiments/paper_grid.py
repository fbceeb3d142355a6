"""The paper's grid (Borkowski et al. 2017, §5): its cells, and the sweep's beyond it.

``paper_cells`` is the paper's grid: raw, moving average, TVD and EKF on ``paper_workload`` at
SNR 0.5, 0.8, 1.0, 5.0 and 10.0, under the ``power`` and the ``amplitude`` definitions of SNR,
over many seeds, with LS at every window of ``LS_WINDOWS``, TVD at every weight of
``TVD_WEIGHTS``, steadyscale's default and the oracle. ``sweep_cells`` adds each filter's
parameter grid, composed with guards, for Pareto fronts and the cost ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scaling import default_spec
from simulator.experiments.cells import DEFAULT, METRICS, Cell, config_label
from simulator.experiments.sweep import grid_cells

PAPER_GROUPS = ("definition", "snr", "config", "filter")
_CAPACITY = 50.0
SUMMARY_METRICS = (*METRICS, "sigma")

SNRS = (0.5, 0.8, 1.0, 5.0, 10.0)
DEFINITIONS = ("power", "amplitude")
PAPER_FILTERS: dict[str, dict[str, Any]] = {
    "raw": {"name": "raw"},
    "moving_average": {"name": "moving_average", "w": 60},
    "tvd": {"name": "tvd", "lam_per_sigma": 10.0},
    "ekf": {"name": "ekf", "process_noise": 0.01},
}
# Each filter's parameter grid for the sweep: its knob from light to heavy smoothing.
SWEEP_FILTERS: dict[str, list[dict[str, Any]]] = {
    "moving_average": [{"name": "moving_average", "w": w} for w in (10, 30, 60, 120, 240)],
    "ewma": [{"name": "ewma", "alpha": alpha} for alpha in (0.1, 0.03, 0.01)],
    "tvd": [{"name": "tvd", "lam_per_sigma": k} for k in (5.0, 7.0, 10.0, 15.0, 20.0, 30.0)],
    "ekf": [{"name": "ekf", "process_noise": q} for q in (1e-4, 1e-3, 1e-2, 1e-1)],
    "moving_median": [{"name": "moving_median", "w": w} for w in (30, 60, 120, 240)],
}
# Guards composed with every filter of the sweep.
SWEEP_GUARDS: dict[str, list[dict[str, Any]]] = {
    "": [],
    "hysteresis 0.01": [{"name": "hysteresis", "band": 0.01}],
    "hysteresis 0.02": [{"name": "hysteresis", "band": 0.02}],
    "cooldown down 60 s": [{"name": "cooldown", "down": 60.0}],
    "stabilization 60 s": [{"name": "stabilization", "window": 60.0}],
}


# The paper does not give LS's window nor TVD's weight: the tables run a range of each and the
# report says which pair reproduces the paper's pattern best (``match_table``).
LS_WINDOWS = (3, 5, 10, 20, 30, 60, 90, 120)
TVD_WEIGHTS = (2.0, 5.0, 10.0, 20.0, 30.0)
ORACLE = "oracle"


def paper_configs() -> dict[str, tuple[dict[str, Any], list[dict[str, Any]], str]]:
    """Label -> (filter spec, guards, what the Scaler observes) of every row of the tables.

    Raw thresholding, LS at every window of ``LS_WINDOWS``, TVD at every weight of
    ``TVD_WEIGHTS``, the EKF, steadyscale's default (``scaling.default_spec``) and the oracle
    (raw thresholding of the noise-free trend).
    """
    default = default_spec(_CAPACITY)
    configs: dict[str, tuple[dict[str, Any], list[dict[str, Any]], str]] = {
        "raw": (PAPER_FILTERS["raw"], [], "noisy")
    }
    for w in LS_WINDOWS:
        spec = {"name": "moving_average", "w": w}
        configs[config_label(spec)] = (spec, [], "noisy")
    for weight in TVD_WEIGHTS:
        spec = {"name": "tvd", "lam_per_sigma": weight}
        configs[config_label(spec)] = (spec, [], "noisy")
    configs[config_label(PAPER_FILTERS["ekf"])] = (PAPER_FILTERS["ekf"], [], "noisy")
    configs[DEFAULT] = (default["filter"], default["guards"], "noisy")
    configs[ORACLE] = ({"name": "raw"}, [], "trend")
    return configs


def paper_cells(
    seeds: Sequence[int], definitions: Sequence[str] = DEFINITIONS, snrs: Sequence[float] = SNRS
) -> list[Cell]:
    """The paper's grid: every definition × SNR × row of ``paper_configs`` × seed."""
    return grid_cells(workloads=["paper"], snrs=snrs, definitions=definitions, seeds=seeds,
                      configs=paper_configs())  # fmt: skip


def sweep_cells(
    seeds: Sequence[int], definitions: Sequence[str] = DEFINITIONS, snrs: Sequence[float] = SNRS
) -> list[Cell]:
    """Every filter setting of ``SWEEP_FILTERS`` with every guard set of ``SWEEP_GUARDS``."""
    filters = [spec for family in SWEEP_FILTERS.values() for spec in family]
    return grid_cells(workloads=["paper"], snrs=snrs, definitions=definitions, seeds=seeds,
                      filters=filters, guard_sets=list(SWEEP_GUARDS.values()))  # fmt: skip
