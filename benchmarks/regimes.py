"""The default against every baseline across actuation regimes, and the price it is run at.

    .venv/bin/steadyscale compare --trace ../shared/data/traces/*.csv --seeds 6 \\
        --pause P --delay D --policy <every label but steadyscale> --out out/regimes/pP_dD
    .venv/bin/python -m benchmarks.regimes                    # the standing, per regime
    .venv/bin/python -m benchmarks.regimes --cells out/regimes/cells.csv  # every cell's winner
    .venv/bin/python -m benchmarks.regimes --winners out/regimes/cells.csv  # counted again
    .venv/bin/python -m benchmarks.regimes --set late_price=200
    .venv/bin/python -m benchmarks.regimes --sweep --plot docs/img/price_sweep.png

Regimes, (pause s, delay s): (4, 0), (8, 0), (12, 0), (8, 5), (8, 30), (20, 30), (30, 60),
(60, 120): a restart of ``pause`` seconds with nothing processed after each operation lands,
``delay`` seconds after it is decided (issue 30). ``steadyscale compare`` stores every run of
every baseline under ``out/regimes/pP_dD/compare.csv`` (benchmarks/regimes.sh runs the eight);
a regime whose folder is missing is skipped and named. The default is simulated here, by the
code as it is, on the HPA's cells: so a change to the decision core is measured without
running the baselines again.

Per regime and per seed set (1-3, 4-6: the prices and the restart prior were chosen on seed 1
of three workloads, ``scaling.policy``), it prints in how many cells (workload × SNR, means over
the seeds) the default ``steadyscale``

* keeps SLA seconds at most the HPA's;
* is the cheapest, or within the cheapest's 95 % interval, at 50 per SLA second;
* at 5 per SLA second, is the cheapest or within among the policies whose SLA seconds are at
  most the HPA's;

with cost = operator-seconds + 30 × operations + price × SLA seconds (DESIGN.md), and the SLA
seconds summed over cells. ``--set NAME=VALUE`` changes the default's settings
(``scaling.baselines.ScalerPolicy``), e.g. ``--set late_price=200``.

``--sweep`` draws, per regime, the default's operator-seconds against its SLA seconds (summed
over the synthetic workloads' cells, seeds 1-3) as its late price varies (``LATE_PRICES``),
beside the HPA's as its target utilisation varies (``HPA_TARGETS``) and every other baseline's
point; and prints, per regime, at how many HPA targets some price makes the default cost less
with no more SLA seconds. ``--only P:D`` (repeatable) limits the run to those regimes;
``--quick`` to the synthetic workloads' cells and seeds 1-3, the sweep's (about 15 s a regime
instead of 10 minutes: a first look at a setting in every regime), or with ``--quick-seeds 4-6``
the seeds never looked at while designing. The last lines sum the counts over the regimes run,
per seed set.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.compare_knobs import default_cells, stored_runs
from benchmarks.standing import DEFAULT, standing, summed, totals, winner_counts
from benchmarks.sweep_plot import plot_sweep
from simulator.experiments.compare import baselines, run_compare_cell

REGIMES = ((4, 0), (8, 0), (12, 0), (8, 5), (8, 30), (20, 30), (30, 60), (60, 120))
SEED_SETS = {"seeds 1-3": (1, 2, 3), "seeds 4-6": (4, 5, 6)}
# Prices of a late second, in operator-seconds: from below the default (1,000) to far above,
# wide enough that the cheapest end meets the HPA's leanest target (0.9) in every regime.
LATE_PRICES = (5.0, 20.0, 50.0, 200.0, 1000.0, 5000.0, 20000.0)
HPA_TARGETS = (0.5, 0.6, 0.7, 0.8, 0.9)


def folder(root: Path, regime: tuple[int, int]) -> Path:
    return root / f"p{regime[0]}_d{regime[1]}"


def with_default(
    runs: Sequence[dict[str, Any]],
    settings: Mapping[str, Any],
    traces: Path,
    regime: tuple[int, int],
    pool: ProcessPoolExecutor,
) -> list[dict[str, Any]]:
    """``runs`` with the default simulated by this code on the HPA's cells (its spec from
    ``compare.baselines``, updated with ``settings``), in place of any stored default."""
    spec = {**baselines()[DEFAULT], **settings}
    cells = [
        dataclasses.replace(cell, policy=DEFAULT, policy_spec=spec)
        for cell in default_cells(
            runs, {}, traces, float(regime[0]), float(regime[1]), policy="hpa"
        )
    ]
    rows = list(pool.map(run_compare_cell, cells, chunksize=4))
    return [run for run in runs if run["policy"] != DEFAULT] + rows


def hpa_rows(
    runs: Sequence[dict[str, Any]],
    target: float,
    traces: Path,
    regime: tuple[int, int],
    pool: ProcessPoolExecutor,
) -> list[dict[str, Any]]:
    """The HPA's stored cells run again at another target utilisation."""
    cells = default_cells(
        runs, {"target": target}, traces, float(regime[0]), float(regime[1]), policy="hpa"
    )
    return list(pool.map(run_compare_cell, cells, chunksize=8))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", type=Path, default=Path("out/regimes"))
    parser.add_argument("--traces", type=Path, default=Path("../shared/data/traces"))
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--quick", action="store_true", help="synthetic cells, seeds 1-3 only")
    parser.add_argument(
        "--quick-seeds", choices=("1-3", "4-6"), default="1-3",
        help="the seeds --quick runs: 4-6 were never looked at while designing (%(default)s)",
    )  # fmt: skip
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--csv", type=Path, help="write the standing table here")
    parser.add_argument("--cells", type=Path, help="write every cell's winners here (CSV)")
    parser.add_argument(
        "--winners", type=Path, help="print the winners of a --cells CSV, per regime, and stop"
    )
    parser.add_argument("--only", action="append", default=[], metavar="P:D")
    args = parser.parse_args(argv)
    settings = {k: json.loads(v) for k, _, v in (item.partition("=") for item in args.set)}
    if args.winners:
        with args.winners.open(encoding="utf-8") as handle:
            groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
            for row in csv.DictReader(handle):
                groups.setdefault((row["pause"], row["delay"], row["seeds"]), []).append(row)
        for (pause, delay, seeds), cells in groups.items():
            print(f"pause {pause} s, delay {delay} s, {seeds}: {winner_counts(cells)}")
        return
    table, curves, winners = [], {}, []
    with ProcessPoolExecutor(args.workers) as pool:
        only = [tuple(int(x) for x in item.split(":")) for item in args.only]
        for regime in [regime for regime in REGIMES if not only or regime in only]:
            path = folder(args.root, regime)
            if not (path / "compare.csv").exists():
                print(f"pause {regime[0]} s, delay {regime[1]} s: no run in {path}, skipped")
                continue
            if args.sweep:  # the sweep alone: the standing is the run without --sweep
                curves[regime] = sweep(stored_runs(path), args.traces, regime, pool)
                continue
            stored = stored_runs(path)
            runs = with_default(
                quick(stored, SEED_SETS[f"seeds {args.quick_seeds}"]) if args.quick else stored,
                settings,
                args.traces,
                regime,
                pool,
            )
            for label, seeds in SEED_SETS.items():
                chosen = [run for run in runs if int(run["seed"]) in seeds]
                if not chosen:
                    continue
                cells: list[dict[str, Any]] = []
                counts = standing(chosen, cells)
                winners += [
                    {"pause": regime[0], "delay": regime[1], "seeds": label, **cell}
                    for cell in cells
                ]
                table.append({"pause": regime[0], "delay": regime[1], "seeds": label, **counts})
                print(
                    f"pause {regime[0]:>2} s, delay {regime[1]:>3} s, {label}: of "
                    f"{counts['cells']:.0f} cells, SLA s <= HPA's {counts['sla_ok']:.0f}, "
                    f"cheapest or within at 50 {counts['at_50']:.0f}, at 5 among the SLA "
                    f"keepers {counts['at_5_keepers']:.0f}; SLA s summed {counts['sla_sum']:.0f} "
                    f"(HPA {counts['hpa_sla_sum']:.0f})",
                    flush=True,
                )
                if args.cells:
                    print(f"    winners: {winner_counts(cells)}", flush=True)
    for line in summed(table):
        print(line)
    if args.csv and table:
        with args.csv.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(table[0]))
            writer.writeheader()
            writer.writerows(table)
    if args.cells and winners:
        with args.cells.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(winners[0]))
            writer.writeheader()
            writer.writerows(winners)
    if args.plot and curves:
        plot_sweep(args.plot, curves)
        print(f"wrote {args.plot}")


def quick(runs: Sequence[dict[str, Any]], seeds: Sequence[int] = (1, 2, 3)) -> list[dict[str, Any]]:
    """The runs of the synthetic workloads' cells, of ``seeds`` (the traces are long)."""
    return [
        run
        for run in runs
        if not str(run["workload"]).startswith("trace:") and int(run["seed"]) in seeds
    ]


def sweep(
    runs: Sequence[dict[str, Any]],
    traces: Path,
    regime: tuple[int, int],
    pool: ProcessPoolExecutor,
) -> dict[str, Any]:
    """The default's curve over ``LATE_PRICES``, the HPA's over ``HPA_TARGETS``, the others',
    on the synthetic workloads and seeds 1-3 (the traces are long: a sweep of them would take
    hours on 2 cores)."""
    runs = quick(runs)
    default = []
    for price in LATE_PRICES:
        rows = with_default(runs, {"late_price": price}, traces, regime, pool)
        default.append((price, *totals([r for r in rows if r["policy"] == DEFAULT])))
    hpa = [
        (target, *totals(hpa_rows(runs, target, traces, regime, pool))) for target in HPA_TARGETS
    ]
    others = {}
    for policy in sorted({str(run["policy"]) for run in runs} - {DEFAULT}):
        others[policy] = totals([run for run in runs if run["policy"] == policy])
    dominated = sum(
        any(cost < h_cost and sla <= h_sla for _, cost, sla in default) for _, h_cost, h_sla in hpa
    )
    print(
        f"pause {regime[0]} s, delay {regime[1]} s, sweep: at {dominated} of {len(hpa)} HPA "
        "targets some late price makes the default cost less with no more SLA seconds"
    )
    for price, cost, sla in default:
        print(f"    late_price {price:>6g}: {cost:10.0f} operator-s, {sla:7.0f} SLA s")
    for target, cost, sla in hpa:
        print(f"    hpa target {target:>4g}: {cost:10.0f} operator-s, {sla:7.0f} SLA s")
    for policy, (cost, sla) in others.items():
        print(f"    {policy}: {cost:10.0f} operator-s, {sla:7.0f} SLA s")
    return {"default": default, "hpa": hpa, "others": others}


if __name__ == "__main__":
    main()
