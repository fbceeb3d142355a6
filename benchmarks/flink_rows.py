"""The Flink rows of a stored compare run, against steadyscale's default and the HPA.

    .venv/bin/python -m benchmarks.flink_rows out/compare-flink/compare.csv

Reads the ``compare.csv`` that ``steadyscale compare --out DIR`` writes and prints, from plain
means over seeds (no intervals; ``compare.md`` judges with them):

* per policy (``steadyscale``, ``hpa``, ``flink``, ``flink (tuned)``, those in the run): runs,
  scaling operations, SLA seconds, operator-seconds, seconds under the trend's count and cost,
  as means over every run;
* per Flink row: in how many workload × SNR cells its SLA seconds are at most the HPA's, and
  where its cost is below the default's at 5 and at 50 per SLA second (cost = 30 × operations
  + operator-seconds + price × SLA seconds), with both costs and the SLA seconds.
"""

from __future__ import annotations

import argparse
import csv
import statistics
from collections import defaultdict
from pathlib import Path

POLICIES = ("steadyscale", "hpa", "flink", "flink (tuned)")
OPERATION_COST = 30.0  # operator-seconds per scaling operation (DESIGN.md, "Cost")
PRICES = (5.0, 50.0)  # operator-seconds per second over the SLA (DESIGN.md, "Cost")

Rows = list[dict[str, str]]


def mean(rows: Rows, column: str) -> float:
    return statistics.mean(float(row[column]) for row in rows)


def cost(rows: Rows, price: float) -> float:
    """Mean cost of ``rows`` at ``price`` per SLA second."""
    operations = OPERATION_COST * mean(rows, "s_total")
    return operations + mean(rows, "operator_seconds") + price * mean(rows, "sla_seconds")


def report(path: Path) -> None:
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    by_policy: dict[str, Rows] = defaultdict(list)
    cells: dict[tuple[str, float], dict[str, Rows]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        by_policy[row["policy"]].append(row)
        cells[(row["workload"], float(row["snr"]))][row["policy"]].append(row)
    present = [policy for policy in POLICIES if policy in by_policy]
    print("| policy | runs | s± | SLA s | operator-s | p− (s) | cost |")
    print("|---|---|---|---|---|---|---|")
    for policy in present:
        runs = by_policy[policy]
        print(
            f"| {policy} | {len(runs)} | {mean(runs, 's_total'):.1f} "
            f"| {mean(runs, 'sla_seconds'):.1f} | {mean(runs, 'operator_seconds'):.0f} "
            f"| {mean(runs, 'p_under'):.0f} | {mean(runs, 'cost'):.0f} |"
        )
    for policy in (p for p in present if p.startswith("flink")):
        keeps = sum(
            mean(cell[policy], "sla_seconds") <= mean(cell["hpa"], "sla_seconds")
            for cell in cells.values()
        )
        print(f"\n{policy}: SLA seconds at most the HPA's in {keeps} of {len(cells)} cells")
        for (workload, snr), cell in sorted(cells.items()):
            ours, theirs = cell[policy], cell["steadyscale"]
            cheaper = [price for price in PRICES if cost(ours, price) < cost(theirs, price)]
            if cheaper:
                costs = ", ".join(
                    f"at {price:g}: {cost(ours, price):.0f} vs {cost(theirs, price):.0f}"
                    for price in cheaper
                )
                print(
                    f"  {workload} SNR {snr:g} cheaper than the default ({costs}); SLA s "
                    f"{mean(ours, 'sla_seconds'):.0f}, HPA {mean(cell['hpa'], 'sla_seconds'):.0f}"
                    f", default {mean(theirs, 'sla_seconds'):.0f}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("compare_csv", type=Path, help="DIR/compare.csv of steadyscale compare")
    report(parser.parse_args().compare_csv)


if __name__ == "__main__":
    main()
