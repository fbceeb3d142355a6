"""``timeline.png``: the rate due, the executors and the batch latency per policy, one figure."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from benchmarks.e2e.measure import Measured
from benchmarks.e2e.workload import Schedule

COLOURS = {
    "steadyscale": "C3",
    "dynamic-allocation": "C0",
    "fixed-peak": "0.35",
    "fixed-mean": "C2",
}


def plot_timeline(
    path: Path,
    schedule: Schedule,
    capacity: float,
    measured: Mapping[str, Measured],
    latency: float,
) -> None:
    """Three panels sharing the time axis (seconds since the schedule's start)."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(11, 8), layout="constrained")
    rate, executors, late = figure.subplots(3, 1, sharex=True, height_ratios=[2, 3, 3])
    edges = np.arange(schedule.rates.size + 1) * schedule.step
    rate.stairs(schedule.rates, edges, color="0.3", label="rows/s due")
    rate.set_ylabel("rows/s due")
    top = int(np.ceil(schedule.rates.max() / capacity))
    for count in range(1, top + 1):
        rate.axhline(count * capacity, color="0.85", linewidth=0.8, zorder=0)
    rate.set_title(f"input (grey lines: what 1, 2, ... executors handle, {capacity:g} rows/s each)")
    end = schedule.duration
    most = 1
    for shift, (policy, figures) in enumerate(measured.items()):
        colour = COLOURS.get(policy, None)
        times = [t for t, _ in figures.steps] + [end + 0.0]
        # Shifted by a few hundredths of an executor each, so that equal counts stay visible.
        counts = [count + 0.04 * (shift - 1.5) for _, count in figures.steps]
        most = max([most, *(count for _, count in figures.steps)])
        executors.stairs(counts, times, color=colour, linewidth=1.6, label=policy, baseline=None)
        commits = [t for t, _ in figures.latencies]
        waits = [wait for _, wait in figures.latencies]
        late.plot(commits, waits, ".", color=colour, markersize=3, label=policy)
    executors.set_ylabel("executors registered")
    # Headroom above the largest count for the legend: lines at the top stay clear of it.
    executors.set_ylim(0, most + 1.8)
    executors.yaxis.set_major_locator(MaxNLocator(integer=True))
    executors.legend(loc="upper left", ncols=4, frameon=False)
    late.axhline(latency, color="black", linestyle="--", linewidth=0.8)
    late.text(0, latency, f" target {latency:g} s", va="bottom", fontsize=8)
    late.set_yscale("log")
    late.set_ylabel("batch latency, s\n(commit - oldest row's arrival)")
    late.set_xlabel("seconds since the schedule's start (the drain after its end included)")
    late.set_xlim(0, None)
    figure.savefig(path, dpi=110)
