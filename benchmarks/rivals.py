"""Would any baseline meet issue 30's per-cell targets? Each one's standing as if it were the
default, from the stored runs of every actuation regime.

    .venv/bin/python -m benchmarks.rivals            # after benchmarks/regimes.sh

For each regime and seed set it prints, of the cells (workload × SNR, means over the seeds),
the most any baseline other than the HPA reaches on each of the three counts of
``benchmarks.regimes`` — SLA seconds at most the HPA's; the cheapest or within at 50 per SLA
second; at 5, the cheapest or within among the SLA keepers — and on the least of the three,
each with the baseline that reaches it. The field is the stored baselines only: the default is
not among them, which makes every count easier for them than the default's is for it.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.compare_knobs import stored_runs
from benchmarks.regimes import REGIMES, SEED_SETS, folder
from benchmarks.standing import standing

COUNTS = {"sla_ok": "SLA s <= HPA's", "at_50": "at 50", "at_5_keepers": "at 5 among keepers"}


def best_rivals(runs: Sequence[Mapping[str, Any]]) -> dict[str, tuple[float, str]]:
    """Per count (``COUNTS``, and ``least``: the least of the three), the most a baseline other
    than the HPA reaches in ``runs`` as the default, and which one (the first by name on ties).

    >>> runs = [{"policy": p, "workload": "w", "snr": 1.0, "seed": s, "s_up": 0, "s_down": 0,
    ...          "operator_seconds": cost, "sla_seconds": sla}
    ...         for p, cost, sla in (("hpa", 100.0, 1.0), ("lean", 50.0, 3.0), ("safe", 90.0, 0.0))
    ...         for s in (1, 2)]
    >>> best_rivals(runs)["sla_ok"], best_rivals(runs)["at_50"]
    ((1.0, 'safe'), (1.0, 'safe'))
    """
    best: dict[str, tuple[float, str]] = {}
    for policy in sorted({str(run["policy"]) for run in runs} - {"hpa"}):
        counts = standing(runs, default=policy)
        reached = {key: counts[key] for key in COUNTS}
        reached["least"] = min(reached.values())
        for key, value in reached.items():
            if key not in best or value > best[key][0]:
                best[key] = (value, policy)
    return best


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", type=Path, default=Path("out/regimes"))
    args = parser.parse_args(argv)
    for regime in REGIMES:
        path = folder(args.root, regime)
        if not (path / "compare.csv").exists():
            print(f"pause {regime[0]} s, delay {regime[1]} s: no run in {path}, skipped")
            continue
        runs = stored_runs(path)
        for label, seeds in SEED_SETS.items():
            chosen = [run for run in runs if int(run["seed"]) in seeds]
            cells = standing(chosen, default="hpa")["cells"]
            best = best_rivals(chosen)
            named = "; ".join(
                f"{title} {best[key][0]:.0f} ({best[key][1]})" for key, title in COUNTS.items()
            )
            print(
                f"pause {regime[0]:>2} s, delay {regime[1]:>3} s, {label}, of {cells:.0f} cells: "
                f"{named}; the least of the three {best['least'][0]:.0f} ({best['least'][1]})"
            )


if __name__ == "__main__":
    main()
