"""Experiments as grids of cells: one cell is one simulated run, one row of results.

A ``Cell`` names everything a run depends on (workload and its seed, noise level and definition,
filter spec, guards, policy), so running it anywhere gives the same row: ``run_cell`` is a pure
function of the cell. Grids of cells run serially here (``run_cells``) or mapped over a Spark
job; ``summarize`` turns rows into means with 95 % confidence intervals, ``pareto_front`` keeps
the configurations nothing beats on both scaling operations and mis-provisioned time, and
``CostModel`` ranks them by a price.

Columns of a result row (``ROW_COLUMNS``):

* the cell: ``config`` (label of the filter + guards configuration), ``filter`` (filter name),
  ``filter_spec`` and ``guards`` (JSON), ``workload``, ``seed``, ``snr``, ``definition``,
  ``sigma`` (the noise deviation that ``snr`` gives on this trend, tuples/s), ``capacity``;
* against the noisy volume, the paper's view (``simulator.model.metrics``): ``s_up``, ``s_down``,
  ``p_over``, ``p_under``, ``operator_seconds``;
* against the noise-free trend: ``p_over_trend``, ``p_under_trend``;
* ``s_total = s_up + s_down``, ``p_total = p_over + p_under``,
  ``p_total_trend = p_over_trend + p_under_trend``, ``cost`` (the default ``CostModel``).

The run starts with the operators needed by the trend's first value, so that no run begins with
a ramp from one operator that every filter would count alike.

>>> cell = Cell(config="tvd", filter_spec={"name": "tvd", "lam": 3000.0}, seed=1, snr=1.0)
>>> row = run_cell(cell)
>>> row["s_total"] == row["s_up"] + row["s_down"], row["snr"], row["definition"]
(True, 1.0, 'power')
>>> run_cell(cell) == row
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from filters import make_filter
from scaling import Scaler, ThresholdPolicy, default_spec, make_guard
from simulator.model.catalog import make_workload
from simulator.model.engine import simulate
from simulator.model.noise import add_noise, noise_std

METRICS = (
    "s_up",
    "s_down",
    "p_over",
    "p_under",
    "operator_seconds",
    "p_over_trend",
    "p_under_trend",
    "s_total",
    "p_total",
    "p_total_trend",
    "cost",
)
ROW_COLUMNS = (
    "config",
    "filter",
    "filter_spec",
    "guards",
    "workload",
    "seed",
    "snr",
    "definition",
    "sigma",
    "capacity",
    *METRICS,
)


@dataclass(frozen=True)
class CostModel:
    """Price of a run, in operator-seconds (the cost of running one operator for one second).

    ``cost = per_operation * (s_up + s_down) + operator_seconds + per_under_second * p_under_trend``

    The defaults are assumptions to be replaced by a user's own prices: a scaling operation
    costs 30 operator-seconds (a restart with state migration stalls an operator for about half
    a minute, as savepoint-and-restart does in Flink or Spark), and every second under-provisioned
    relative to the trend costs 5 (missed latency objectives are dearer than capacity).
    Over-provisioning is already paid through ``operator_seconds``. ``under`` names the metric
    charged ``per_under_second``: the queue model of ``simulator.experiments.compare`` charges
    the seconds its latency is over the SLA (``under="sla_seconds"``), since there
    under-provisioning shows as backlog rather than as a count.

    >>> CostModel().cost({"s_up": 2, "s_down": 1, "operator_seconds": 100.0, "p_under_trend": 4.0})
    210.0
    """

    per_operation: float = 30.0
    per_under_second: float = 5.0
    under: str = "p_under_trend"

    def cost(self, metrics: Mapping[str, float]) -> float:
        operations = metrics["s_up"] + metrics["s_down"]
        return float(
            self.per_operation * operations
            + metrics["operator_seconds"]
            + self.per_under_second * metrics[self.under]
        )


@dataclass(frozen=True)
class Cell:
    """One simulated run: a configuration (filter + guards) on one noisy workload.

    ``seed`` seeds the workload; the noise gets a seed derived from it
    (``noise_seed(seed)``), so that trend and noise are independent draws. ``observe="trend"``
    feeds the Scaler the noise-free trend instead of the noisy volume: with the ``raw`` filter
    that is the oracle, the limit every filter is measured against.
    """

    config: str
    filter_spec: Mapping[str, Any]
    seed: int
    snr: float
    definition: str = "power"
    guards: Sequence[Mapping[str, Any]] = ()
    workload: str = "paper"
    workload_params: Mapping[str, Any] = field(default_factory=dict)
    duration: float = 1500.0
    capacity: float = 50.0
    observe: str = "noisy"


def noise_seed(seed: int) -> int:
    """The noise seed of workload seed ``seed``: a separate, reproducible stream.

    >>> noise_seed(1) == noise_seed(1) != noise_seed(2)
    True
    """
    return int(np.random.SeedSequence([seed, 1]).generate_state(1)[0])


DEFAULT = "default"
"""The label, and the filter ``spec``, of steadyscale's default in ``build_scalers``."""

Config = tuple[str | Mapping[str, Any], Sequence[Mapping[str, Any]]]
"""A configuration: a filter spec (or ``DEFAULT``) and the guards after it."""


def noisy_trend(trend: np.ndarray, seed: int, snr: float, definition: str) -> np.ndarray:
    """``trend`` plus the noise of workload seed ``seed`` at ``snr`` (``noise_seed(seed)``)."""
    return add_noise(trend, snr, noise_seed(seed), definition)


def build_scalers(
    configs: Mapping[str, Config], policy: ThresholdPolicy, operators: int
) -> dict[str, Scaler]:
    """One fresh Scaler per configuration, every one built before any runs (a bad spec fails
    first). ``DEFAULT`` is steadyscale's default (``scaling.default_spec``): its own guards
    first, then the given ones.

    >>> scalers = build_scalers({"default": ("default", []), "ls": ({"name": "raw"}, [])},
    ...                         ThresholdPolicy(capacity=50.0), operators=4)
    >>> [(label, scaler.filter.name, len(scaler.guards)) for label, scaler in scalers.items()]
    [('default', 'changepoint', 1), ('ls', 'raw', 0)]
    """
    scalers = {}
    for label, (filter_spec, guards) in configs.items():
        if filter_spec == DEFAULT:
            default = default_spec(policy.capacity)
            filter_spec, guards = default["filter"], [*default["guards"], *guards]
        scalers[label] = Scaler(
            make_filter(dict(filter_spec)),  # type: ignore[arg-type]
            policy,
            [make_guard(dict(guard)) for guard in guards],
            operators,
        )
    return scalers


def run_cell(cell: Cell, cost_model: CostModel | None = None) -> dict[str, Any]:
    """Simulate ``cell`` and return its result row (columns ``ROW_COLUMNS``)."""
    trend = workload_trend(cell.workload, cell.seed, cell.duration, cell.workload_params)
    noisy = noisy_trend(trend, cell.seed, cell.snr, cell.definition)
    if cell.observe not in ("noisy", "trend"):
        raise ValueError(f"observe={cell.observe!r} is not allowed: use 'noisy' or 'trend'")
    policy = ThresholdPolicy(capacity=cell.capacity)
    config = {cell.config: (cell.filter_spec, cell.guards)}
    scaler = build_scalers(config, policy, policy.needed(float(trend[0])))[cell.config]
    observed = trend if cell.observe == "trend" else noisy
    result = simulate(scaler, observed, reference=noisy, trend=trend)
    assert result.trend_metrics is not None  # a trend was given
    metrics: dict[str, Any] = dict(result.metrics)
    metrics["p_over_trend"] = result.trend_metrics["p_over"]
    metrics["p_under_trend"] = result.trend_metrics["p_under"]
    metrics["s_total"] = metrics["s_up"] + metrics["s_down"]
    metrics["p_total"] = metrics["p_over"] + metrics["p_under"]
    metrics["p_total_trend"] = metrics["p_over_trend"] + metrics["p_under_trend"]
    metrics["cost"] = (cost_model or CostModel()).cost(metrics)
    return {
        "config": cell.config,
        "filter": cell.filter_spec["name"],
        "filter_spec": json.dumps(dict(cell.filter_spec), sort_keys=True),
        "guards": json.dumps([dict(guard) for guard in cell.guards], sort_keys=True),
        "workload": cell.workload,
        "seed": cell.seed,
        "snr": cell.snr,
        "definition": cell.definition,
        "sigma": noise_std(trend, cell.snr, cell.definition),
        "capacity": cell.capacity,
        **{name: metrics[name] for name in METRICS},
    }


def run_cells(
    cells: Sequence[Cell],
    cost_model: CostModel | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Run ``cells`` one after the other in this process; ``progress(1)`` after each."""
    rows = []
    for cell in cells:
        rows.append(run_cell(cell, cost_model))
        if progress is not None:
            progress(1)
    return rows


def summarize(
    rows: Iterable[Mapping[str, Any]],
    by: Sequence[str] = ("definition", "snr", "config"),
    metrics: Sequence[str] = METRICS,
    confidence: float = 0.95,
) -> list[dict[str, Any]]:
    """Mean and confidence half-width of each metric per group of rows, in first-seen order.

    The half-width is Student's ``t`` quantile times the standard error,
    ``t_{(1+confidence)/2, n-1} * s / sqrt(n)`` with ``s`` the sample standard deviation
    (divisor n - 1); it is 0 for a group of one row. Output columns: the ``by`` columns, ``n``,
    and for each metric ``m`` the mean under ``m`` and the half-width under ``m_ci``.

    >>> rows = [{"snr": 1.0, "s_up": v} for v in (2, 4, 6)]
    >>> summarize(rows, by=("snr",), metrics=("s_up",))
    [{'snr': 1.0, 'n': 3, 's_up': 4.0, 's_up_ci': 4.968...}]
    """
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row[key] for key in by), []).append(row)
    summary = []
    for key, members in groups.items():
        entry: dict[str, Any] = dict(zip(by, key, strict=True))
        entry["n"] = len(members)
        for metric in metrics:
            values = np.array([float(member[metric]) for member in members])
            entry[metric] = float(values.mean())
            entry[f"{metric}_ci"] = _half_width(values, confidence)
        summary.append(entry)
    return summary


def config_label(spec: Mapping[str, Any], guards: Sequence[Mapping[str, Any]] = ()) -> str:
    """A short readable label: ``tvd lam_per_sigma=10 + hysteresis band=0.05``.

    >>> config_label({"name": "ewma", "alpha": 0.1}, [{"name": "cooldown", "down": 60.0}])
    'ewma alpha=0.1 + cooldown down=60'
    """
    return " + ".join(_label(part) for part in (spec, *guards))


def _label(spec: Mapping[str, Any]) -> str:
    params = " ".join(
        f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"
        for key, value in spec.items()
        if key != "name"
    )
    return f"{spec['name']} {params}".strip()


def _half_width(values: np.ndarray, confidence: float) -> float:
    if values.size < 2:
        return 0.0
    # Imported here: the service imports this module (through the command line) and has no
    # scipy; the commands that aggregate have it (the [plots] and [spark] extras).
    from scipy import stats

    quantile = float(stats.t.ppf((1.0 + confidence) / 2.0, values.size - 1))
    return quantile * float(values.std(ddof=1)) / math.sqrt(values.size)


def workload_trend(
    workload: str, seed: int, duration: float | None, params: Mapping[str, Any]
) -> np.ndarray:
    """``make_workload(workload, seed, duration, **params)``, built once per process, read-only.

    Grids run every configuration on the same trends; the cache keeps the 256 latest.
    """
    return _trend(workload, seed, duration, _frozen(params))


def _frozen(params: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((key, tuple(v) if isinstance(v, list) else v) for key, v in params.items()))


@lru_cache(maxsize=256)
def _trend(
    workload: str, seed: int, duration: float | None, params: tuple[tuple[str, Any], ...]
) -> np.ndarray:
    trend = make_workload(workload, seed=seed, duration=duration, **dict(params))
    trend.setflags(write=False)
    return trend
