"""benchmarks.compare_knobs: a held count as a reference point against a run;
the variants it is asked for."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from benchmarks.compare_knobs import (
    REFERENCE,
    Hold,
    hold_run,
    plot_standing,
    reference_standing,
    variant,
)
from simulator.experiments.compare import CompareCell, baselines


def test_holding_a_count_runs_that_count_and_is_ranked_per_price() -> None:
    cell = CompareCell("hpa", baselines()["hpa"], "paper", 1, 5.0, duration=300.0)
    row = hold_run((dataclasses.replace(cell), 3))
    # Held from the start's count to 3 at the first decision (15 s): one operation, then 3.
    assert row["s_total"] == 1 and row["workload"] == "paper" and row["policy"] == REFERENCE
    assert 3 * 285 <= row["operator_seconds"] <= 3 * 285 + 15 * 20
    assert Hold(3).spec == {"name": "hold", "operators": 3}
    # Two cells: the reference is cheaper than both policies in one at 5 per SLA s (with more
    # SLA seconds than the HPA's there) and in none at 50.
    runs = [
        {"workload": "a", "snr": 1.0, "policy": "hpa", "cost": 100.0, "sla_seconds": 0.0},
        {"workload": "a", "snr": 1.0, "policy": "q", "cost": 120.0, "sla_seconds": 1.0},
        {"workload": "b", "snr": 1.0, "policy": "hpa", "cost": 50.0, "sla_seconds": 0.0},
    ]
    held = [
        {"workload": "a", "snr": 1.0, "policy": REFERENCE, "cost": 80.0, "sla_seconds": 4.0},
        {"workload": "b", "snr": 1.0, "policy": REFERENCE, "cost": 60.0, "sla_seconds": 0.0},
    ]
    assert reference_standing(runs, held) == (
        "cheaper than every policy of the run in 1 of 2 cells at 5 per SLA s (0 of them with "
        "SLA s at most the HPA's; its cost over the cheapest's: 0.80-1.20); cheaper than every "
        "policy of the run in 0 of 2 cells at 50 per SLA s (0 of them with SLA s at most the "
        "HPA's; its cost over the cheapest's: 1.20-2.60)"
    )
    held[0]["sla_seconds"] = 0.0
    assert "in 1 of 2 cells at 5 per SLA s (1 of them" in reference_standing(runs, held)
    assert "a SNR 1 at 5: 0.800 of the cheapest, SLA s 0.0 (HPA 0.0)" in reference_standing(
        runs, held, table=True
    )


def test_a_variant_joins_settings_by_commas_with_json_values() -> None:
    assert variant("restart=15") == {"restart": 15}
    both = variant('volume="processed",quiet_weight=0.25')
    assert both == {"volume": "processed", "quiet_weight": 0.25}
    assert variant('filter={"name": "tvd", "lam": 4}') == {"filter": {"name": "tvd", "lam": 4}}
    assert variant("guards=[1,2],latency=null") == {"guards": [1, 2], "latency": None}


def test_the_standing_of_several_variants_is_drawn_side_by_side(tmp_path: Path) -> None:
    path = tmp_path / "risk.png"
    figures = [[23, 30, 33, 25.0], [29, 33, 33, 42.0], [33, 33, 23, 257.0]]
    plot_standing(path, ["risk=0.0001", "risk=0.001", "risk=0.1"], figures, 33, "a run")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
