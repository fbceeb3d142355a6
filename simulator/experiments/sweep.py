"""Sweeps: grids of simulated runs on Spark, resumable, with summaries, Pareto fronts and plots.

A sweep is the product of workloads × SNRs × SNR definitions × filter settings × guard sets ×
seeds; each point is a ``simulator.experiments.cells.Cell``. Filters and guards are written in
the one spec grammar (``simulator.experiments.specs``) with grids: ``tvd:lam_per_sigma=5|10|20``
is three settings, ``moving_average:w=30|60`` two; a guard set joins guards with ``+``
(``hysteresis:band=0.01+cooldown:down=60``) and ``none`` is the empty set.

``run_sweep`` runs the cells its output folder does not hold yet (``simulator.spark.store``:
resumable, one grid per folder), then aggregates in Spark and writes

* ``DIR/sweep.csv``: one row per cell of this grid, in grid order: ``cell_id``, the cell's
  columns and every metric of ``simulator.experiments.cells.ROW_COLUMNS``;
* ``DIR/summary.csv``: means and 95 % confidence half-widths per workload, definition, SNR and
  configuration; ``DIR/pareto.csv``: each group's Pareto front (scaling operations against p±
  vs trend); ``DIR/sweep.md``: the cheapest configurations by the cost model and the fronts;
* ``DIR/pareto_<workload>_<definition>.png``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scaling import default_spec
from simulator.experiments.cells import (
    DEFAULT,
    METRICS,
    ROW_COLUMNS,
    Cell,
    config_label,
    run_cell,
)
from simulator.experiments.specs import expand_spec
from simulator.output.pareto import plot_pareto
from simulator.output.tables import metric_table, write_csv

GROUPS = ("workload", "definition", "snr", "config", "filter")
SUMMARY_METRICS = (*METRICS, "sigma")


def grid_cells(
    *,
    workloads: Sequence[str],
    snrs: Sequence[float],
    definitions: Sequence[str],
    seeds: Sequence[int],
    filters: Sequence[Mapping[str, Any]] = (),
    guard_sets: Sequence[Sequence[Mapping[str, Any]]] = ((),),
    configs: Configs | None = None,
    duration: float = 1500.0,
    capacity: float = 50.0,
) -> list[Cell]:
    """Every combination, in a fixed order (workload, definition, SNR, configuration, seed).

    The configurations are every filter with every guard set, labelled by ``config_label``,
    or ``configs`` when given: label -> (filter spec, guards, what the Scaler observes).
    """
    if configs is None:
        configs = {
            config_label(spec, guards): (spec, guards, "noisy")
            for spec in filters
            for guards in guard_sets
        }
    return [
        Cell(
            config=label,
            filter_spec=dict(spec),
            guards=[dict(guard) for guard in guards],
            observe=observe,
            seed=seed,
            snr=snr,
            definition=definition,
            workload=workload,
            duration=duration,
            capacity=capacity,
        )
        for workload in workloads
        for definition in definitions
        for snr in snrs
        for label, (spec, guards, observe) in configs.items()
        for seed in seeds
    ]


Configs = Mapping[str, tuple[Mapping[str, Any], Sequence[Mapping[str, Any]], str]]
"""Label -> (filter spec, guards, what the Scaler observes: ``"noisy"`` or ``"trend"``)."""


def filter_configs(
    texts: Sequence[str], guard_sets: Sequence[Sequence[Mapping[str, Any]]], capacity: float
) -> dict[str, tuple[Mapping[str, Any], Sequence[Mapping[str, Any]], str]]:
    """Every filter setting of ``texts`` (the spec grammar, with grids) with every guard set.

    ``default`` is steadyscale's default (``scaling.default_spec``), as ``simulate`` takes it:
    its own guards first, then the set's, labelled ``default`` (``default + ...``).

    >>> list(filter_configs(["default", "tvd:lam_per_sigma=5|10"], [[]], 50.0))
    ['default', 'tvd lam_per_sigma=5', 'tvd lam_per_sigma=10']
    """
    configs: dict[str, tuple[Mapping[str, Any], Sequence[Mapping[str, Any]], str]] = {}
    for text in texts:
        if text.strip() == DEFAULT:
            default = default_spec(capacity)
            for guards in guard_sets:
                label = config_label({"name": DEFAULT}, guards)
                configs[label] = (default["filter"], [*default["guards"], *guards], "noisy")
            continue
        for spec in expand_spec(text):
            for guards in guard_sets:
                configs[config_label(spec, guards)] = (spec, guards, "noisy")
    return configs


def run_sweep(
    cells: Sequence[Cell], out: Path, spark: Any, batch_size: int | None = None
) -> list[dict[str, Any]]:
    """Run the cells ``out`` does not hold yet, aggregate on Spark, write the outputs.

    Returns the rows of ``cells`` (with ``cell_id``) in the order of ``cells``. ``out`` must
    be free for this grid (``claim_folder``; callers with ``--force`` claim it first).
    """
    from simulator.experiments.spark_cells import CELL_SCHEMA
    from simulator.spark.store import run_stored

    results = run_stored(cells, out, spark, batch_size, run=run_cell, schema=CELL_SCHEMA)
    rows = [row.asDict() for row in results.orderBy("grid_order").collect()]
    for row in rows:
        row.pop("grid_order")
    write_csv(out / "sweep.csv", rows, ["cell_id", *ROW_COLUMNS])
    _aggregate(results.drop("grid_order"), out)
    return rows


def _aggregate(results: Any, out: Path) -> None:
    from simulator.spark.cells import pareto_spark, rank_by_cost, summarize_spark

    summary_df = summarize_spark(results, by=GROUPS, metrics=SUMMARY_METRICS).cache()
    summary = _sorted([row.asDict() for row in summary_df.collect()])
    front = _sorted([row.asDict() for row in pareto_spark(summary_df, by=GROUPS[:3]).collect()])
    ranked = [row.asDict() for row in rank_by_cost(summary_df, by=GROUPS[:3]).collect()]
    columns = [*GROUPS, "n", *[f"{m}{s}" for m in SUMMARY_METRICS for s in ("", "_ci")]]
    write_csv(out / "summary.csv", summary, columns)
    write_csv(out / "pareto.csv", front, columns)
    parts = [
        "# Sweep",
        f"{len(summary)} groups (workload × definition × SNR × configuration), "
        f"{summary[0]['n'] if summary else 0} seeds each. p± vs trend: seconds mis-provisioned "
        "against the noise-free trend; cost = 30 × (s+ + s−) + operator-seconds + 5 × p− vs "
        "trend (simulator.experiments.cells.CostModel).",
    ]
    columns_shown = {"s_total": "s+ + s−", "p_total_trend": "p± vs trend (s)",
                     "p_total": "p± vs noisy volume (s)", "cost": "cost"}  # fmt: skip
    for key in sorted({tuple(row[g] for g in GROUPS[:3]) for row in summary}):
        workload, definition, snr = key
        parts.append(f"## {workload}, SNR {snr:g} (`{definition}`)")
        cheapest = sorted(
            (r for r in ranked if tuple(r[g] for g in GROUPS[:3]) == key), key=lambda r: r["rank"]
        )[:5]
        parts.append("Cheapest by the cost model:")
        parts.append(metric_table(cheapest, columns_shown))
        parts.append("Pareto front:")
        parts.append(metric_table(
            [r for r in front if tuple(r[g] for g in GROUPS[:3]) == key], columns_shown
        ))  # fmt: skip
    (out / "sweep.md").write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    plots = {
        (workload, definition): out / f"pareto_{workload}_{definition}.png"
        for workload, definition in sorted({(r["workload"], r["definition"]) for r in summary})
    }
    for stale in set(out.glob("pareto_*.png")) - set(plots.values()):
        stale.unlink()  # a plot of this grid's earlier, smaller run; not beside the new report
    for (workload, definition), path in plots.items():
        panel = [r for r in summary if r["workload"] == workload and r["definition"] == definition]
        plot_pareto(
            path,
            panel,
            sorted({r["snr"] for r in panel}),
            title=f"{workload}, SNR definition {definition!r}",
        )


def _sorted(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda row: tuple(row[g] for g in GROUPS) + (row.get("s_total", 0),))
