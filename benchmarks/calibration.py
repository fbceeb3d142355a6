"""Does the model know how late it will be? The late seconds it expects against those it gets.

    .venv/bin/python -m benchmarks.calibration                      # every regime, seeds 1-3
    .venv/bin/python -m benchmarks.calibration --seeds 4,5,6 --plot docs/img/calibration.png

For every decision the default makes from a backlog (a cost record, ``scaling.choice``), the
late seconds it expects of the count it chose over its horizon (``explain.candidates``, the
record's ``horizon``: the actuation delay + the restart + ``scaling.cost.AFTER``), with those
of the later operation it expects to correct the count (its ``correction`` chance × the
``operation_late`` seconds one brings, ``scaling.cost``), are set against the SLA seconds the
run then has in the same seconds (``QueueConfig.sla``: a second with the queueing delay over
the latency, as ``steadyscale compare`` counts them; a window cut by the run's end is expected
in proportion). Windows overlap (a decision a second), so a sum
weighs every second of a run about alike in both columns. Decisions are grouped by what
happens in their window:

* ``held, none lands``: the count held and no operation lands in the window: the model's
  queue with a fixed count, compared with the queue's;
* ``held, a later lands``: the count held, but an operation decided later lands in the window
  (the model prices holding as holding for the whole horizon: what a later decision does is
  not in it);
* ``up now``, ``down now``: an operation decided (or re-targeted) at this sample, to more
  operators or to fewer.

Cells: the six synthetic workloads of ``steadyscale compare`` at SNR 1, 5 and 10, on the
queue model of every regime of issue 30 (``benchmarks.regimes.REGIMES``). Ratios over 1 mean
the model expects fewer late seconds than it gets. About 3 minutes on two cores.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.regimes import REGIMES
from benchmarks.trace_decision import Traced
from simulator.experiments.compare import SEED_002_WORKLOADS, CompareCell, baselines, queue_run
from simulator.model.queue import QueueConfig

WORKLOADS = ("paper", *SEED_002_WORKLOADS)
SNRS = (1.0, 5.0, 10.0)
KINDS = ("held, none lands", "held, a later lands", "up now", "down now")

# Per kind: decisions, expected late seconds, SLA seconds (sums over the windows).
Tally = np.ndarray


def cell_tally(regime: tuple[int, int], workload: str, snr: float, seed: int) -> Tally:
    """The default's decisions in one cell, tallied by ``KINDS``: a (4, 3) array."""
    pause, delay = regime
    spec = baselines()["steadyscale"]
    cell = CompareCell("steadyscale", spec, workload, seed, snr, pause=pause, delay=delay)
    policy = Traced(**{key: value for key, value in spec.items() if key != "name"})
    _, result = queue_run(cell, policy)
    timeline = result.timeline
    times = timeline["t"]
    late = np.concatenate([[0.0], np.cumsum(timeline["latency"] > QueueConfig.sla)])
    step = float(times[1] - times[0])
    # operations[i]: how many the run made before step i
    landed = np.concatenate([[0], np.cumsum(np.diff(timeline["operators"]) != 0)])
    tally = np.zeros((len(KINDS), 3))
    last = len(times)
    for decision in policy.decisions:
        record = decision.explain
        if not record or "candidates" not in record:
            continue
        rows = {row["operators"]: row for row in record["candidates"]}
        horizon = float(record["horizon"])
        start = int(np.searchsorted(times, decision.t))
        end = min(int(np.searchsorted(times, decision.t + horizon)), last)
        if start >= last or decision.operators not in rows:
            continue
        share = (end - start) * step / horizon  # of the horizon inside the run
        row, inputs = rows[decision.operators], record["inputs"]
        # The queue's late seconds, and those a correction brings at the chance of one.
        correction = row.get("correction", 0.0) * (inputs.get("operation_late") or 0.0)
        expected = (row["late_seconds"] + correction) * share
        got = (late[end] - late[start]) * step
        if decision.operators != decision.previous:
            kind = 2 if decision.operators > decision.previous else 3
        else:
            kind = 1 if landed[min(end, last - 1)] > landed[start] else 0
        tally[kind] += (1.0, expected, got)
    return tally


def _run(job: tuple[tuple[int, int], str, float, int]) -> tuple[tuple[int, int], Tally]:
    return job[0], cell_tally(*job)


def calibration(
    regimes: Sequence[tuple[int, int]], seeds: Sequence[int], workers: int = 2
) -> dict[tuple[int, int], Tally]:
    """Per regime, the tallies summed over its cells and ``seeds``."""
    jobs = [(r, w, s, seed) for r in regimes for w in WORKLOADS for s in SNRS for seed in seeds]
    totals = {regime: np.zeros((len(KINDS), 3)) for regime in regimes}
    with ProcessPoolExecutor(workers) as pool:
        for regime, tally in pool.map(_run, jobs, chunksize=4):
            totals[regime] += tally
    return totals


def table(totals: dict[tuple[int, int], Tally]) -> list[str]:
    """Markdown rows: per regime and kind, decisions, the mean expected and gotten late
    seconds per window, and their ratio."""
    lines = [
        "| regime (pause s, delay s) | decisions | " + " | ".join(KINDS) + " | all |",
        "|---|---|" + "---|" * (len(KINDS) + 1),
    ]
    for (pause, delay), tally in totals.items():
        cells = [_cell(row) for row in tally]
        decisions = "/".join(f"{row[0]:.0f}" for row in tally)
        whole = tally.sum(axis=0)
        lines.append(
            f"| ({pause}, {delay}) | {decisions} | " + " | ".join(cells) + f" | {_cell(whole)} |"
        )
    return lines


def _cell(row: Tally) -> str:
    count, expected, got = row
    if count == 0:
        return "—"
    ratio = f"{got / expected:.2g}×" if expected > 0 else "∞"
    return f"{expected / count:.3g} → {got / count:.3g} ({ratio})"


def plot(path: Path, totals: dict[tuple[int, int], Tally]) -> None:
    """Expected against gotten late seconds per window, log-log, one point per regime and kind."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7.5, 6.0))
    colours = ("tab:green", "tab:orange", "tab:purple", "tab:red")
    floor = 1e-4  # windows whose mean is below are drawn at it
    for kind, colour in enumerate(colours):
        xs, ys, names = [], [], []
        for (pause, delay), tally in totals.items():
            count, expected, got = tally[kind]
            if count:
                xs.append(max(expected / count, floor))
                ys.append(max(got / count, floor))
                names.append(f"{pause},{delay}")
        axis.scatter(xs, ys, color=colour, label=KINDS[kind], zorder=3)
        for x, y, name in zip(xs, ys, names, strict=True):
            axis.annotate(name, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    axis.plot([floor, 1e3], [floor, 1e3], color="0.5", linestyle="--", label="as expected")
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlim(floor / 2, 1e3)
    axis.set_ylim(floor / 2, 1e3)
    axis.set_xlabel("late seconds the model expected in a decision's horizon (mean)")
    axis.set_ylabel("SLA seconds the run had in those seconds (mean; 0 drawn at 1e-4)")
    axis.set_title("Expected late seconds against the run's, per regime (pause, delay)")
    axis.legend(loc="upper left", fontsize=8)
    axis.grid(True, which="major", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seeds", default="1,2,3", help="comma-separated")
    parser.add_argument("--only", action="append", default=[], metavar="P:D")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args(argv)
    seeds = [int(seed) for seed in args.seeds.split(",")]
    regimes: list[Any] = [tuple(map(int, only.split(":"))) for only in args.only] or REGIMES
    totals = calibration(regimes, seeds, args.workers)
    print(f"seeds {args.seeds}: expected → gotten late seconds per decision's window (ratio)")
    print("\n".join(table(totals)))
    if args.plot:
        plot(args.plot, totals)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
