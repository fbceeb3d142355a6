"""benchmarks.compare_knobs: holding a count as a reference point against a stored run."""

from __future__ import annotations

import dataclasses

from benchmarks.compare_knobs import Hold, hold_run, hold_standing
from simulator.experiments.compare import CompareCell, baselines


def test_holding_a_count_runs_that_count_and_is_ranked_per_price() -> None:
    cell = CompareCell("hpa", baselines()["hpa"], "paper", 1, 5.0, duration=300.0)
    row = hold_run((dataclasses.replace(cell), 3))
    # Held from the start's count to 3 at the first decision (15 s): one operation, then 3.
    assert row["s_total"] == 1 and row["workload"] == "paper" and row["policy"] == "hold"
    assert 3 * 285 <= row["operator_seconds"] <= 3 * 285 + 15 * 20
    assert Hold(3).spec == {"name": "hold", "operators": 3}
    # Two cells: holding is cheaper than both policies in one at 5 per SLA s and in none at 50.
    runs = [
        {"workload": "a", "snr": 1.0, "policy": "p", "cost": 100.0, "sla_seconds": 0.0},
        {"workload": "a", "snr": 1.0, "policy": "q", "cost": 120.0, "sla_seconds": 1.0},
        {"workload": "b", "snr": 1.0, "policy": "p", "cost": 50.0, "sla_seconds": 0.0},
    ]
    held = [
        {"workload": "a", "snr": 1.0, "policy": "hold", "cost": 80.0, "sla_seconds": 4.0},
        {"workload": "b", "snr": 1.0, "policy": "hold", "cost": 60.0, "sla_seconds": 0.0},
    ]
    assert hold_standing(runs, held) == (
        "cheaper than every policy of the run in 1 of 2 cells at 5 per SLA s (its cost over "
        "the cheapest's: 0.80-1.20); cheaper than every policy of the run in 0 of 2 cells at "
        "50 per SLA s (its cost over the cheapest's: 1.20-2.60)"
    )
