"""Figures of volume series and simulated runs, written as PNG files.

``plot_timeline`` draws what the paper's Fig. 2-4 show: the raw and filtered volume over time
and, below it, the operator count each filter led to. ``plot_filtered`` draws the top panel
alone, for filter outputs without a simulation. Both draw on a bare ``matplotlib`` ``Figure``,
which renders with Agg and never touches pyplot or a display.

>>> import tempfile
>>> import numpy as np
>>> from filters import make_filter
>>> from scaling import Scaler, ThresholdPolicy
>>> from simulator import add_noise, paper_workload, simulate
>>> trend = paper_workload(seed=1, duration=300)
>>> noisy = add_noise(trend, snr=5.0, seed=2)
>>> runs = {name: simulate(Scaler(make_filter(name), ThresholdPolicy(capacity=50.0)), noisy,
...                        trend=trend) for name in ("raw", "ekf")}
>>> with tempfile.TemporaryDirectory() as folder:
...     path = plot_timeline(Path(folder) / "timeline.png", runs, trend=trend, capacity=50.0)
...     path.read_bytes()[:4]
b'\\x89PNG'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from simulator.engine import SimulationResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes

# More threshold lines than this would grey the whole panel.
MAX_THRESHOLD_LINES = 40


def plot_timeline(
    path: str | os.PathLike[str],
    runs: Mapping[str, SimulationResult],
    *,
    title: str = "",
    trend: np.ndarray | None = None,
    capacity: float | None = None,
) -> Path:
    """Two panels over time: volume (samples, ``trend``, filtered) and operators; returns ``path``.

    Parameters
    ----------
    path
        The PNG file to write.
    runs
        Label -> result of ``simulator.simulate``, all over the same samples and policy. Each run
        keeps one colour in both panels; a run whose filtered volume is the samples themselves
        (``raw``) has no line of its own in the top panel (the samples are its line) and a
        faint one in the bottom panel.
    title
        Figure title.
    trend
        The noise-free volume, shape ``(n,)``, drawn in black.
    capacity
        Tuples/s per operator: the top panel then marks the volumes where the operators needed
        change (``k * capacity``) and gets an operator scale on its right.

    The bottom panel also shows, dashed, the operators needed by the trend when the results have
    it (``timeline["needed_trend"]``), else those needed by their reference volume.
    """
    if not runs:
        raise ValueError("plot_timeline: runs is empty; give at least one SimulationResult")
    first = next(iter(runs.values())).timeline
    times, samples = first["t"], first["volume"]
    for label, run in runs.items():
        if not np.array_equal(run.timeline["volume"], samples):
            raise ValueError(f"plot_timeline: run {label!r} is not over the same samples")

    from matplotlib.figure import Figure  # slow to import; only figures need it

    figure = Figure(figsize=(12, 7), layout="constrained")
    volume_axes, operator_axes = figure.subplots(
        2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2]}
    )
    filtered = {label: run.timeline["filtered"] for label, run in runs.items()}
    _draw_volume(volume_axes, times, samples, filtered, trend)
    if capacity is not None:
        _draw_thresholds(volume_axes, capacity)

    for index, (label, run) in enumerate(runs.items()):
        # Scaling on the samples themselves jumps all the time and would hide the other runs.
        faint = np.array_equal(run.timeline["filtered"], samples)
        operator_axes.step(
            times,
            run.timeline["operators"],
            where="post",
            color=_colour(index),
            alpha=0.35 if faint else 1.0,
            linewidth=1,
            label=label,
        )
    if "needed_trend" in first:
        needed, needed_label = first["needed_trend"], "needed by the trend"
    else:
        reference = next(iter(runs.values())).reference
        needed, needed_label = first["needed"], f"needed by the {reference}"
    operator_axes.step(
        times,
        needed,
        where="post",
        color="black",
        linestyle="--",
        linewidth=1.2,
        label=needed_label,
    )
    operator_axes.set(xlabel="time (s)", ylabel="operators")
    operator_axes.legend(loc="upper left", fontsize="small", ncols=min(len(runs) + 1, 6))
    if title:
        figure.suptitle(title)
    figure.savefig(path, dpi=120)
    return Path(path)


def plot_filtered(
    path: str | os.PathLike[str],
    times: np.ndarray,
    samples: np.ndarray,
    filtered: Mapping[str, np.ndarray],
    *,
    title: str = "",
    trend: np.ndarray | None = None,
    xlabel: str = "time (s)",
) -> Path:
    """One panel: ``samples``, ``trend`` and each filter's output over ``times``; returns ``path``.

    ``filtered`` maps labels to outputs of shape ``(n,)``; an output equal to the samples (``raw``)
    gets no line of its own.
    """
    from matplotlib.figure import Figure

    figure = Figure(figsize=(12, 5), layout="constrained")
    axes = figure.subplots()
    _draw_volume(axes, times, samples, filtered, trend)
    axes.set_xlabel(xlabel)
    if title:
        axes.set_title(title)
    figure.savefig(path, dpi=120)
    return Path(path)


def _draw_volume(
    axes: Axes,
    times: np.ndarray,
    samples: np.ndarray,
    filtered: Mapping[str, np.ndarray],
    trend: np.ndarray | None,
) -> None:
    axes.plot(times, samples, ".", color="0.75", markersize=2, label="samples")
    if trend is not None:
        axes.plot(times, trend, color="black", linewidth=1, label="trend")
    for index, (label, values) in enumerate(filtered.items()):
        # A line through every sample would hide the samples and the other lines.
        if not np.array_equal(values, samples):
            axes.plot(times, values, color=_colour(index), linewidth=1.2, label=label)
    axes.set_ylabel("volume (tuples/s)")
    axes.legend(loc="upper left", fontsize="small", ncols=min(len(filtered) + 2, 6))


def _draw_thresholds(axes: Axes, capacity: float) -> None:
    """Light lines at each multiple of ``capacity`` in view, and an operator scale on the right."""
    low, high = axes.get_ylim()
    levels = np.arange(max(1, np.ceil(low / capacity)), np.floor(high / capacity) + 1) * capacity
    if levels.size <= MAX_THRESHOLD_LINES:
        for level in levels:
            axes.axhline(level, color="0.85", linewidth=0.6, zorder=0)
    scale = axes.secondary_yaxis(
        "right",
        functions=(lambda v: np.divide(v, capacity), lambda n: np.multiply(n, capacity)),
    )
    scale.set_ylabel(f"volume / capacity ({capacity:g} tuples/s per operator)")


def _colour(index: int) -> str:
    """The default colour cycle, so that a run keeps its colour in every panel."""
    return f"C{index % 10}"
