"""How a regime's runs are judged (``benchmarks.regimes``, ``benchmarks.rivals``): a run's cost
at a price per SLA second, the default's three counts among the runs of every cell, each cell's
winners, and the counts summed over regimes.

Cost = operator-seconds + ``PER_OPERATION`` × operations + price × SLA seconds (DESIGN.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from simulator.experiments.cells import summarize

DEFAULT = "steadyscale"
PER_OPERATION = 30.0


def priced(row: Mapping[str, Any], price: float) -> float:
    """A run's cost at ``price`` per SLA second."""
    operations = float(row["s_up"]) + float(row["s_down"])
    return (
        float(row["operator_seconds"])
        + PER_OPERATION * operations
        + price * float(row["sla_seconds"])
    )


def standing(
    runs: Sequence[Mapping[str, Any]],
    winners: list[dict[str, Any]] | None = None,
    default: str = DEFAULT,
) -> dict[str, float]:
    """The three counts and the SLA seconds summed over cells, of the default (or of the
    policy ``default`` names) among ``runs``; with ``winners``, one row per cell appended to
    it: the default's and the HPA's SLA seconds and costs, and the policy that wins at 50 and
    among the SLA keepers at 5."""
    rows = [{**run, "p5": priced(run, 5.0), "p50": priced(run, 50.0)} for run in runs]
    summary = summarize(
        rows, by=("workload", "snr", "policy"), metrics=("p5", "p50", "sla_seconds")
    )
    cells: dict[tuple[Any, Any], dict[str, Mapping[str, Any]]] = {}
    for entry in summary:
        cells.setdefault((entry["workload"], entry["snr"]), {})[entry["policy"]] = entry
    counts = {
        "cells": 0.0,
        "sla_ok": 0.0,
        "at_50": 0.0,
        "at_5_keepers": 0.0,
        "sla_sum": 0.0,
        "hpa_sla_sum": 0.0,
    }
    for policies in cells.values():
        mine, hpa = policies.get(default), policies.get("hpa")
        if mine is None or hpa is None:
            continue
        counts["cells"] += 1
        counts["sla_sum"] += mine["sla_seconds"]
        counts["hpa_sla_sum"] += hpa["sla_seconds"]
        counts["sla_ok"] += mine["sla_seconds"] <= hpa["sla_seconds"]
        best = min(policies.values(), key=lambda entry: entry["p50"])
        counts["at_50"] += mine["p50"] <= best["p50"] + best["p50_ci"]
        keepers = [p for p in policies.values() if p["sla_seconds"] <= hpa["sla_seconds"]]
        cheapest = min(keepers, key=lambda entry: entry["p5"])
        counts["at_5_keepers"] += (
            mine in keepers and mine["p5"] <= cheapest["p5"] + cheapest["p5_ci"]
        )
        if winners is not None:
            winners.append(
                {
                    "workload": mine["workload"],
                    "snr": mine["snr"],
                    "sla_seconds": round(mine["sla_seconds"], 2),
                    "hpa_sla_seconds": round(hpa["sla_seconds"], 2),
                    "cost_at_50": round(mine["p50"]),
                    "cheapest_at_50": best["policy"],
                    "its_cost_at_50": round(best["p50"]),
                    "cost_at_5": round(mine["p5"]),
                    "cheapest_keeper_at_5": cheapest["policy"],
                    "its_cost_at_5": round(cheapest["p5"]),
                }
            )
    return counts


def winner_counts(cells: Sequence[Mapping[str, Any]]) -> str:
    """How many cells each policy wins at 50 and among the SLA keepers at 5, most first, and
    where the default does not win at 50, its cost over the winner's (median, largest).

    >>> cell = {"cost_at_50": 110, "its_cost_at_50": 100, "cheapest_keeper_at_5": "b"}
    >>> for part in winner_counts([{**cell, "cheapest_at_50": "a"},
    ...                            {**cell, "cheapest_at_50": DEFAULT,
    ...                             "cheapest_keeper_at_5": "a"}]).split("; "):
    ...     print(part)
    at 50: a 1, steadyscale 1 (where another wins, the default costs 1.10x its cost, at most 1.10x)
    at 5 among the keepers: a 1, b 1
    """
    lost = sorted(
        float(cell["cost_at_50"]) / float(cell["its_cost_at_50"])
        for cell in cells
        if cell["cheapest_at_50"] != DEFAULT
    )
    parts = []
    for key, label in (
        ("cheapest_at_50", "at 50"),
        ("cheapest_keeper_at_5", "at 5 among the keepers"),
    ):
        counts: dict[str, int] = {}
        for cell in cells:
            counts[str(cell[key])] = counts.get(str(cell[key]), 0) + 1
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        parts.append(f"{label}: " + ", ".join(f"{policy} {n}" for policy, n in ranked))
    if lost:
        median = lost[len(lost) // 2] if len(lost) % 2 else sum(lost[len(lost) // 2 - 1 :][:2]) / 2
        parts[0] += (
            f" (where another wins, the default costs {median:.2f}x its cost, "
            f"at most {lost[-1]:.2f}x)"
        )
    return "; ".join(parts)


def summed(table: Sequence[Mapping[str, Any]]) -> list[str]:
    """The standing summed over the regimes run, per seed set (one line each), so that two
    versions of the model compare at a glance.

    >>> row = {"cells": 18.0, "sla_ok": 9.0, "at_50": 17.0, "at_5_keepers": 8.0, "sla_sum": 40.0}
    >>> line, = summed([{"seeds": "seeds 1-3", **row}, {"seeds": "seeds 1-3", **row}])
    >>> head, _, rest = line.partition(": ")
    >>> head
    'all 2 regimes, seeds 1-3'
    >>> print(rest)
    of 36 cells, SLA s <= HPA's 18, at 50 34, at 5 among the SLA keepers 16; SLA s summed 80
    """
    lines = []
    for label in dict.fromkeys(str(row["seeds"]) for row in table):
        rows = [row for row in table if row["seeds"] == label]
        total = {key: sum(float(row[key]) for row in rows) for key in rows[0] if key != "seeds"}
        lines.append(
            f"all {len(rows)} regimes, {label}: of {total['cells']:.0f} cells, SLA s <= HPA's "
            f"{total['sla_ok']:.0f}, at 50 {total['at_50']:.0f}, at 5 among the SLA keepers "
            f"{total['at_5_keepers']:.0f}; SLA s summed {total['sla_sum']:.0f}"
        )
    return lines


def totals(rows: Sequence[Mapping[str, Any]]) -> tuple[float, float]:
    """Operator-seconds (with 30 per operation) and SLA seconds, summed over ``rows``."""
    return (
        sum(priced(row, 0.0) for row in rows),
        sum(float(row["sla_seconds"]) for row in rows),
    )
