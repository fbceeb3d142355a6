"""benchmarks.rivals: each baseline's standing as if it were the default, the best per count."""

from __future__ import annotations

from benchmarks.rivals import best_rivals
from tests.benchmarks.test_regimes import run


def test_the_best_rival_per_count_and_at_all_three_at_once_never_the_hpa() -> None:
    # Two cells. "lean" is the cheapest everywhere but late in cell b; "safe" keeps the SLA in
    # both but costs more than lean in a; the HPA keeps it too and is dearest.
    runs = [
        run(policy, workload, seed, cost, sla)
        for policy, workload, cost, sla in (
            ("hpa", "a", 2000.0, 1.0),
            ("hpa", "b", 2000.0, 1.0),
            ("lean", "a", 1000.0, 0.0),
            ("lean", "b", 1000.0, 30.0),
            ("safe", "a", 1500.0, 1.0),
            ("safe", "b", 1500.0, 1.0),
        )
        for seed in (1, 2)
    ]
    best = best_rivals(runs)
    assert best["sla_ok"] == (2.0, "safe")
    # Each wins one cell at 50 (lean's 30 SLA s cost 1,500 in b) and one among the keepers at
    # 5 (lean is none in b): a tie, named by the first.
    assert best["at_50"] == (1.0, "lean") and best["at_5_keepers"] == (1.0, "lean")
    assert best["least"] == (1.0, "lean")
    assert all(policy != "hpa" for _, policy in best.values())
