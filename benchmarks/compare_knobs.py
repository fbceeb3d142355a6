"""The default's standing on a stored compare run, with its policy settings changed.

    .venv/bin/python -m benchmarks.compare_knobs                        # as the run has it
    .venv/bin/python -m benchmarks.compare_knobs --set restart=0 --set restart=15
    .venv/bin/python -m benchmarks.compare_knobs --set 'volume="processed",quiet_weight=0'
    .venv/bin/python -m benchmarks.compare_knobs --out DIR --seed 4 --seed 5 --seed 6
    .venv/bin/python -m benchmarks.compare_knobs --hold 1 --hold 2

``steadyscale compare --out DIR`` stores every run of every policy in ``DIR/compare.csv``.
This script simulates the ``steadyscale`` row again on the same cells (workloads, traces found
under ``--traces``, SNR, seeds; ``--pause`` and ``--delay`` must be the run's, 8 s and 0 by
default), once as it is and once per ``--set name=value`` (a setting of
``scaling.baselines.ScalerPolicy``: ``restart``, ``latency``, ``quiet``, ``quiet_weight``,
``lead``, ``catch_up``, ``utilisation``, ``risk``, ``volume``; the value in JSON; several
settings of one variant joined by commas), locally and in parallel, and keeps the other
policies' stored rows. For each variant it prints, from this run:

* the cells where the default is the cheapest or inside the cheapest's 95 % interval, at 5 and
  at 50 per SLA second (``compare_report.standing_table``, as ``compare.md`` counts them);
* the cells whose SLA seconds are at most the HPA's, and the SLA seconds summed over cells
  (with ``--table``, the table of every cell, as ``compare.md`` has it);
* as stored, how many runs of the default now cost other than in the run (0: this code decides
  as the code that made the run did);
* with ``--seed``, the same for only those seeds of the run (seeds a rule was not designed
  on, say);
* with ``--hold N``, how a stage that holds ``N`` instances whatever it reports (no
  autoscaler) would stand: in how many cells it costs less than every policy of the run, at 5
  and at 50 per SLA second, and in how many of those its SLA seconds are at most the HPA's;
* with ``--plot FILE``, the counts and SLA seconds of every ``--set`` variant (or, without
  one, of the run as stored) drawn side by side, in the order given.

Only the default is simulated, so a variant takes about half a minute on two cores; the
baselines' rows must come from the same code (a fresh ``steadyscale compare`` run).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from simulator.experiments.cells import summarize
from simulator.experiments.compare import (
    COMPARE_METRICS,
    CompareCell,
    run_compare_cell,
)
from simulator.experiments.compare_report import (
    DEFAULT_POLICY,
    priced_cost,
    standing_cells,
    standing_table,
)
from simulator.model.queue import QueueConfig

REFERENCE = "reference"  # the label of a held count's rows among the run's

TEXT = ("policy", "family", "policy_spec", "workload", "definition")


def variant(item: str) -> dict[str, Any]:
    """The settings of one ``--set``: ``NAME=VALUE`` pairs joined by commas, values in JSON.

    >>> variant('volume="processed",quiet_weight=0.5')
    {'volume': 'processed', 'quiet_weight': 0.5}
    """
    pairs = (pair.partition("=") for pair in re.split(r",(?=\w+=)", item))
    return {name: json.loads(value) for name, _, value in pairs}


def stored_runs(folder: Path) -> list[dict[str, Any]]:
    """``DIR/compare.csv`` with its numbers as numbers."""
    with (folder / "compare.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    text = {*TEXT, "cell_id"}
    return [{k: v if k in text else float(v) for k, v in row.items()} for row in rows]


def workload_of(name: str, traces: Path) -> tuple[str, dict[str, str], float | None]:
    """A stored run's ``workload`` as a cell runs it: its name, parameters and duration
    (``trace:NAME`` is ``traces/NAME.csv``, all of it; a synthetic workload lasts 1,500 s)."""
    if name.startswith("trace:"):
        path = traces / f"{name.removeprefix('trace:')}.csv"
        return "trace", {"path": str(path)}, None
    return name, {}, 1500.0


def default_cells(
    runs: Sequence[Mapping[str, Any]],
    settings: Mapping[str, Any],
    traces: Path,
    pause: float = QueueConfig.pause,
    delay: float = QueueConfig.delay,
    policy: str = DEFAULT_POLICY,
) -> list[CompareCell]:
    """The stored cells of ``policy`` (the default), its spec updated with ``settings``."""
    cells = []
    for run in runs:
        if run["policy"] != policy:
            continue
        spec = {**json.loads(str(run["policy_spec"])), **settings}
        workload, params, duration = workload_of(str(run["workload"]), traces)
        cells.append(
            CompareCell(
                policy,
                spec,
                workload,
                int(run["seed"]),
                float(run["snr"]),
                str(run["definition"]),
                params,
                duration,
                pause=pause,
                delay=delay,
            )
        )
    return cells


def standing(runs: Sequence[Mapping[str, Any]], table: bool = False) -> tuple[str, list[float]]:
    """The two counts of ``standing_table`` and the SLA seconds against the HPA's; with
    ``table``, the table too. And as ``FIGURES``: those counts and the SLA seconds summed."""
    by = ("workload", "snr", "definition", "policy", "family")
    summary = summarize(list(runs), by=by, metrics=COMPARE_METRICS)
    _, wins = standing_cells(summary, runs=runs)
    line, cell_table = standing_table(summary, runs=runs).split(".\n", 1)
    cells: dict[tuple[Any, ...], dict[str, float]] = {}
    for row in summary:
        cells.setdefault((row["workload"], row["snr"]), {})[row["policy"]] = row["sla_seconds"]
    under = sum(sla[DEFAULT_POLICY] <= sla["hpa"] + 1e-9 for sla in cells.values())
    total = sum(sla[DEFAULT_POLICY] for sla in cells.values())
    counts = f"{line}; SLA s at most the HPA's in {under} of {len(cells)}, {total:.0f} SLA s summed"
    return counts + (cell_table if table else ""), [wins[5.0], wins[50.0], under, total]


# What ``standing`` counts, in order, as ``plot_standing`` labels it.
FIGURES = (
    "cheapest or within, at 5 per SLA s",
    "cheapest or within, at 50 per SLA s",
    "SLA s at most the HPA's",
    "SLA s summed over cells",
)


def plot_standing(
    path: Path, labels: Sequence[str], figures: Sequence[Sequence[float]], cells: int, title: str
) -> None:
    """The ``standing`` of each variant, in the order given: the three counts of cells (of
    ``cells``) on the left axis, the SLA seconds summed on a log scale on the right."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, left = plt.subplots(figsize=(max(6.0, 1.1 * len(labels) + 2.0), 5.0))
    x = range(len(labels))
    for k, (marker, colour) in enumerate((("o", "tab:blue"), ("s", "tab:green"), ("^", "tab:red"))):
        values = [row[k] for row in figures]
        left.plot(x, values, marker=marker, color=colour, label=FIGURES[k])
    left.set_ylim(0, cells + 1)
    left.set_ylabel(f"cells of {cells}")
    left.set_xticks(list(x), labels, rotation=20, ha="right")
    right = left.twinx()
    right.plot(x, [row[3] for row in figures], "k--", marker="x", label=FIGURES[3])
    right.set_yscale("log")
    right.set_ylabel("SLA seconds summed (log)")
    handles = left.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    fig.legend(handles, FIGURES, loc="lower center", ncol=2, fontsize=8, frameon=False)
    left.set_title(title, fontsize=10)
    left.grid(alpha=0.3)
    fig.tight_layout(rect=(0.0, 0.1, 1.0, 1.0))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def changed(stored: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]) -> int:
    """How many re-simulated runs of the default cost other than the stored ones: 0 when
    this code decides as the code that made the run did."""
    key = ("workload", "snr", "seed")
    cost = {
        tuple(run[k] for k in key): run["cost"] for run in stored if run["policy"] == DEFAULT_POLICY
    }
    return sum(abs(cost[tuple(row[k] for k in key)] - row["cost"]) > 1e-6 for row in rows)


class Hold:
    """No autoscaler: ``operators`` instances whatever the stage reports (a reference point)."""

    name = "hold"
    interval = 15.0

    def __init__(self, operators: int) -> None:
        self.operators = operators

    def decide(self, observation: Any) -> int:
        return self.operators

    @property
    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "operators": self.operators}


def hold_run(job: tuple[CompareCell, int]) -> dict[str, Any]:
    """The row of holding a count on one cell."""
    cell, operators = job
    return {**run_compare_cell(cell, Hold(operators)), "policy": REFERENCE}


def reference_standing(
    runs: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]], table: bool = False
) -> str:
    """In how many cells a reference (``rows``, labelled ``REFERENCE``) costs less than every
    policy of the run, per price, and of those how many with SLA seconds at most the HPA's;
    with ``table``, its cost over the cheapest's and its SLA seconds, cell by cell."""
    found, lines = [], []
    sla: dict[tuple[Any, ...], dict[str, list[float]]] = {}
    for run in [*runs, *rows]:
        by_policy = sla.setdefault((run["workload"], run["snr"]), {})
        by_policy.setdefault(str(run["policy"]), []).append(float(run["sla_seconds"]))
    kept = {
        key: _mean(by[REFERENCE]) <= _mean(by.get("hpa", [-1.0])) + 1e-9 for key, by in sla.items()
    }
    for price in (5.0, 50.0):
        costs: dict[tuple[Any, ...], dict[str, list[float]]] = {}
        for run in [*runs, *rows]:
            cell = costs.setdefault((run["workload"], run["snr"]), {})
            cell.setdefault(str(run["policy"]), []).append(priced_cost(run, price))
        ratios = {}
        for key, cell in costs.items():
            means = {policy: _mean(values) for policy, values in cell.items()}
            ratios[key] = means[REFERENCE] / min(v for k, v in means.items() if k != REFERENCE)
            if table:
                lines.append(
                    f"  {key[0]} SNR {key[1]:g} at {price:g}: {ratios[key]:.3f} of the "
                    f"cheapest, SLA s {_mean(sla[key][REFERENCE]):.1f} (HPA "
                    f"{_mean(sla[key].get('hpa', [math.nan])):.1f})"
                )
        cheaper = [key for key, ratio in ratios.items() if ratio < 1.0]
        found.append(
            f"cheaper than every policy of the run in {len(cheaper)} of {len(ratios)} cells at "
            f"{price:g} per SLA s ({sum(kept[key] for key in cheaper)} of them with SLA s at "
            f"most the HPA's; its cost over the cheapest's: {min(ratios.values()):.2f}-"
            f"{max(ratios.values()):.2f})"
        )
    return "; ".join(found) + "".join(f"\n{line}" for line in lines)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=Path("out/compare"), help="a compare run")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--traces", type=Path, default=Path("../shared/data/traces"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pause", type=float, default=QueueConfig.pause, help="the run's --pause")
    parser.add_argument("--delay", type=float, default=QueueConfig.delay, help="the run's --delay")
    parser.add_argument("--table", action="store_true", help="the standing of every cell")
    parser.add_argument("--plot", type=Path, help="draw every variant's standing to this PNG")
    parser.add_argument(
        "--seed", type=int, action="append", help="only these seeds of the run (repeatable)"
    )
    parser.add_argument(
        "--hold",
        type=int,
        action="append",
        default=[],
        help="also hold this many instances in every cell, whatever the stage reports",
    )
    args = parser.parse_args(argv)
    runs = stored_runs(args.out)
    if args.seed:
        runs = [run for run in runs if int(run["seed"]) in args.seed]
    others = [run for run in runs if run["policy"] != DEFAULT_POLICY]
    variants: list[dict[str, Any]] = [{}]
    variants += [variant(item) for item in args.set]
    labels, figures = [], []
    with ProcessPoolExecutor(args.workers) as pool:
        for settings in variants:
            cells = default_cells(runs, settings, args.traces, args.pause, args.delay)
            rows = list(pool.map(run_compare_cell, cells, chunksize=4))
            label = ", ".join(f"{k}={v}" for k, v in settings.items()) or "as stored"
            text, figure = standing([*others, *rows], args.table)
            print(f"{label}: {text}", flush=True)
            labels.append(label)
            figures.append(figure)
            if not settings:
                differ = changed(runs, rows)
                print(f"  {differ} of {len(rows)} runs of the default cost other than stored")
        cells = default_cells(runs, {}, args.traces, args.pause, args.delay)
        for operators in args.hold:
            held = list(pool.map(hold_run, [(cell, operators) for cell in cells], chunksize=4))
            print(f"hold {operators}: {reference_standing(runs, held)}", flush=True)
    if args.plot:
        seeds = sorted({int(run["seed"]) for run in runs})
        title = f"{args.out}, seeds {', '.join(map(str, seeds))}: the default, re-simulated"
        cells_count = len({(run["workload"], run["snr"]) for run in runs})
        drawn = slice(1, None) if args.set else slice(None)  # the settings given, in order
        plot_standing(args.plot, labels[drawn], figures[drawn], cells_count, title)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
