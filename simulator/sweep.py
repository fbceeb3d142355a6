"""Sweeps: grids of simulated runs on Spark, resumable, with summaries, Pareto fronts and plots.

A sweep is the product of workloads × SNRs × SNR definitions × filter settings × guard sets ×
seeds; each point is a ``simulator.experiment.Cell``. Filters and guards are written as specs
with grids: ``tvd:lam_per_sigma=5|10|20`` is three settings, ``moving_average:w=30|60`` two;
a guard set joins guards with ``+`` (``hysteresis:band=0.01+cooldown:down=60``) and ``none`` is
the empty set.

``run_sweep`` runs the cells that its output directory does not hold yet as Spark jobs (batches
of cells; each batch is appended to ``DIR/cells.parquet`` once it has finished, so an
interrupted sweep loses at most the batch in flight and a rerun skips everything done), then
aggregates in Spark and writes

* ``DIR/sweep.csv``: one row per cell of this grid, in grid order: ``cell_id``, the cell's
  columns and every metric of ``simulator.experiment.ROW_COLUMNS``;
* ``DIR/summary.csv``: means and 95 % confidence half-widths per workload, definition, SNR and
  configuration; ``DIR/pareto.csv``: each group's Pareto front (scaling operations against p±
  vs trend); ``DIR/sweep.md``: the cheapest configurations by the cost model and the fronts;
* ``DIR/pareto_<workload>_<definition>.png``.

A cell's id is a hash of everything it depends on, so a changed parameter is a new cell and
never reuses an old result.

One folder holds one grid (``claim_folder``): ``DIR/grid.json`` records it, seeds aside, so that
a rerun, or one with more seeds, resumes, and a run of another grid into the same folder is
refused before Spark starts (``force=True``, ``--force``, clears the folder's results first) rather
than mixing two grids in ``cells.parquet`` and leaving the other grid's plots beside the report.

>>> expand_spec("tvd:lam_per_sigma=5|10,method=exact")
[{'name': 'tvd', 'lam_per_sigma': 5, 'method': 'exact'},
 {'name': 'tvd', 'lam_per_sigma': 10, 'method': 'exact'}]
>>> expand_guard_sets("none")
[[]]
>>> len(expand_guard_sets("hysteresis:band=0.01|0.02+cooldown:down=60"))
2
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import itertools
import json
import math
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from simulator.experiment import METRICS, ROW_COLUMNS, Cell, config_label
from simulator.report import metric_table, plot_pareto

GROUPS = ("workload", "definition", "snr", "config", "filter")
SUMMARY_METRICS = (*METRICS, "sigma")


def expand_spec(text: str) -> list[dict[str, Any]]:
    """``name:key=v1|v2,key2=w`` → one spec per combination of the ``|`` alternatives.

    Values are parsed as JSON when they can be (numbers, ``null``, lists), else kept as text.
    """
    name, _, options = text.strip().partition(":")
    if not name:
        raise ValueError(f"spec {text!r} has no name: write NAME or NAME:KEY=VALUE,...")
    keys, choices = [], []
    for option in options.split(",") if options else []:
        key, equals, values = option.partition("=")
        if not equals or not key.strip() or not values:
            raise ValueError(f"spec {text!r}: {option!r} is not of the form key=value|value...")
        keys.append(key.strip())
        choices.append([_parse_value(value.strip()) for value in values.split("|")])
    return [
        {"name": name, **dict(zip(keys, combination, strict=True))}
        for combination in itertools.product(*choices)
    ]


def expand_guard_sets(text: str) -> list[list[dict[str, Any]]]:
    """``none``, or guards joined by ``+`` (each with grids) → every guard set of the grid."""
    if text.strip() == "none":
        return [[]]
    per_guard = [expand_spec(part) for part in text.split("+")]
    return [list(combination) for combination in itertools.product(*per_guard)]


def grid_cells(
    *,
    workloads: Sequence[str],
    snrs: Sequence[float],
    definitions: Sequence[str],
    filters: Sequence[Mapping[str, Any]],
    guard_sets: Sequence[Sequence[Mapping[str, Any]]],
    seeds: Sequence[int],
    duration: float = 1500.0,
    capacity: float = 50.0,
) -> list[Cell]:
    """Every combination, in a fixed order (workload, definition, SNR, filter, guards, seed)."""
    return [
        Cell(
            config=config_label(spec, guards),
            filter_spec=dict(spec),
            guards=[dict(guard) for guard in guards],
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
        for spec in filters
        for guards in guard_sets
        for seed in seeds
    ]


def cell_id(cell: Any) -> str:
    """A stable id of everything ``cell`` (a dataclass) depends on (16 hex digits of a SHA-256).

    >>> a = Cell(config="x", filter_spec={"name": "raw"}, seed=1, snr=1.0)
    >>> cell_id(a) == cell_id(dataclasses.replace(a)) != cell_id(dataclasses.replace(a, seed=2))
    True
    """
    fields = dataclasses.asdict(cell)
    fields.pop("config", None)  # a label, not an input
    text = json.dumps(fields, sort_keys=True, default=list)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


GRID_FILE = "grid.json"
RESULTS = ("cells.parquet", GRID_FILE, "*.csv", "*.md", "*.png")
"""What a run writes into its folder: what ``force`` clears (nothing else is touched)."""


def grid_key(cells: Sequence[Any]) -> str:
    """An id of the grid ``cells`` belong to, whatever their seeds (16 hex digits).

    >>> a = Cell(config="x", filter_spec={"name": "raw"}, seed=1, snr=1.0)
    >>> grid_key([a]) == grid_key([a, dataclasses.replace(a, seed=2)])
    True
    >>> grid_key([a]) == grid_key([dataclasses.replace(a, snr=2.0)])
    False
    """
    points = set()
    for cell in cells:
        fields = dataclasses.asdict(cell)
        fields.pop("config", None)
        fields.pop("seed", None)
        points.add(json.dumps(fields, sort_keys=True, default=list))
    return hashlib.sha256("\n".join(sorted(points)).encode()).hexdigest()[:16]


def claim_folder(out: Path, cells: Sequence[Any], force: bool = False) -> None:
    """Make ``out`` the folder of the grid of ``cells``, or refuse (``ValueError``).

    A new or empty folder, or one holding this grid's results (``GRID_FILE`` says so, seeds
    aside), is taken; one holding another grid's, or results without a ``GRID_FILE``, is
    refused unless ``force``, which deletes the ``RESULTS`` there first. Pure Python and quick:
    callers run it before Spark starts.
    """
    key = grid_key(cells)
    record = out / GRID_FILE
    held = [path for pattern in RESULTS for path in out.glob(pattern)] if out.is_dir() else []
    if held and not force:
        found = json.loads(record.read_text(encoding="utf-8")) if record.exists() else None
        if found is None or found.get("grid") != key:
            what = f"grid {found['grid']} ({found['cells']} cells)" if found else "results"
            raise ValueError(
                f"{out} holds another {what}, not this one ({len(cells)} cells); write to a new "
                "--out folder, or pass --force to delete the results there and start again"
            )
    if force:
        for path in held:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
    out.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"grid": key, "cells": len(cells)}) + "\n", encoding="utf-8")


def run_sweep(
    cells: Sequence[Cell], out: Path, spark: Any, batch_size: int | None = None
) -> list[dict[str, Any]]:
    """Run the cells ``out`` does not hold yet, aggregate on Spark, write the outputs.

    Returns the rows of ``cells`` (with ``cell_id``) in the order of ``cells``. ``out`` must
    be free for this grid (``claim_folder``; callers with ``--force`` claim it first).
    """
    results = run_stored(cells, out, spark, batch_size)
    rows = [row.asDict() for row in results.orderBy("grid_order").collect()]
    for row in rows:
        row.pop("grid_order")
    write_csv(out / "sweep.csv", rows, ["cell_id", *ROW_COLUMNS])
    _aggregate(results.drop("grid_order"), out)
    return rows


def run_stored(
    cells: Sequence[Any],
    out: Path,
    spark: Any,
    batch_size: int | None = None,
    *,
    run: Callable[[Any], Mapping[str, Any]] | None = None,
    schema: Any = None,
) -> Any:
    """Run the cells ``out/cells.parquet`` does not hold yet; a DataFrame of the rows of ``cells``.

    The engine under ``run_sweep`` and ``simulator.compare``: cells (any frozen dataclass) run
    in batches through ``run_cells_spark`` (with ``run`` and ``schema`` when they are not
    ``Cell``s), each batch appended to the store when it finishes. The DataFrame has
    ``cell_id``, the row's columns and ``grid_order`` (the cell's index in ``cells``).
    """
    from tqdm import tqdm

    from simulator.spark import ROW_SCHEMA, collect_rows, run_cells_spark

    claim_folder(out, cells)
    store = out / "cells.parquet"
    ids = [cell_id(cell) for cell in cells]
    done = _stored_ids(spark, store)
    todo = [(i, cell) for i, cell in enumerate(cells) if ids[i] not in done]
    size = batch_size or max(200, math.ceil(len(todo) / 10))
    batches = [todo[start : start + size] for start in range(0, len(todo), size)]
    _say(f"{len(cells)} cells, {len(cells) - len(todo)} already in {store}, "
         f"{len(todo)} to run in {len(batches)} batches")  # fmt: skip
    # A bar on a terminal, a line per batch in a log (tqdm's own rule: disable=None).
    with tqdm(total=len(todo), unit="cell", file=sys.stderr, disable=None) as bar:
        for number, batch in enumerate(batches, 1):
            started = time.perf_counter()
            results = run_cells_spark(
                spark, [cell for _, cell in batch], run=run, schema=schema or ROW_SCHEMA
            )
            rows = collect_rows(results)
            results.unpersist()
            records = [{"cell_id": ids[i], **row} for (i, _), row in zip(batch, rows, strict=True)]
            spark.createDataFrame(records).write.mode("append").parquet(str(store))
            bar.update(len(batch))
            if bar.disable:
                _say(f"batch {number}/{len(batches)}: {len(batch)} cells in "
                     f"{time.perf_counter() - started:.1f} s")  # fmt: skip
    stored = spark.read.parquet(str(store))
    wanted = spark.createDataFrame([(cid, order) for order, cid in enumerate(ids)],
                                   "cell_id string, grid_order long")  # fmt: skip
    return stored.dropDuplicates(["cell_id"]).join(wanted, "cell_id")


def _aggregate(results: Any, out: Path) -> None:
    from simulator.spark import pareto_spark, rank_by_cost, summarize_spark

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
        "trend (simulator.experiment.CostModel).",
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


def _stored_ids(spark: Any, store: Path) -> set[str]:
    if not store.exists():
        return set()
    return {row.cell_id for row in spark.read.parquet(str(store)).select("cell_id").collect()}


def _sorted(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda row: tuple(row[g] for g in GROUPS) + (row.get("s_total", 0),))


def write_csv(path: Path, rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> None:
    """``rows`` as CSV with a header, only ``columns``, in that order."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _say(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
