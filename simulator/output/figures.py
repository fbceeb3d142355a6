"""Figures of volume series and simulated runs, written as PNG files.

``plot_timeline`` draws what the paper's Fig. 2-4 show: the raw and filtered volume over time
and, below it, the operator count each filter led to. ``plot_filtered`` draws the top panel
alone, for filter outputs without a simulation. Both draw on a bare ``matplotlib`` ``Figure``,
which renders with Agg and never touches pyplot or a display.

Made to be read by a person: one legend below the panels (never over the data), whole numbers
on operator axes, dates on the time axis when the series has them (``dates``), the volume's own
unit (``unit``). A series longer than ``MAX_POINTS`` would draw as a solid band of ink: it is
drawn per bin instead (the samples as their min-max band, every line as its bin mean, operator
counts as min-max bands around their mean), beside a zoomed excerpt of ``EXCERPT`` samples at
full resolution, whose span is shaded on the overview.

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
from typing import TYPE_CHECKING, Any

import numpy as np

from simulator.model.engine import SimulationResult

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# More threshold lines than this would grey the whole panel.
MAX_THRESHOLD_LINES = 40
# Points per panel beyond which a series is drawn per bin; the bins are wide enough (about six
# pixels) that a daily cycle in months of data becomes a band, not a solid block of lines.
MAX_POINTS = 3000
BINS = 200
# Samples in the zoomed excerpt of a long series.
EXCERPT = 500


def plot_timeline(
    path: str | os.PathLike[str], runs: Mapping[str, SimulationResult], **options: Any
) -> Path:
    """``timeline_figure(runs, **options)`` written to ``path`` as PNG; returns ``path``."""
    return _save(timeline_figure(runs, **options), path)


def timeline_figure(
    runs: Mapping[str, SimulationResult],
    *,
    title: str = "",
    trend: np.ndarray | None = None,
    capacity: float | None = None,
    dates: np.ndarray | None = None,
    unit: str = "tuples/s",
) -> Figure:
    """Two panels over time: volume (samples, ``trend``, filtered) and operators.

    Parameters
    ----------
    runs
        Label -> result of ``simulator.simulate``, all over the same samples and policy. Each run
        keeps one colour in both panels. Runs are told apart by their label (``run_style``):
        ``raw`` (thresholding the samples themselves) has no line of its own in the top panel
        (the samples are its line) and a faint one under the others in the bottom panel;
        ``default`` is drawn last, thickest, above everything else.
    title
        Figure title.
    trend
        The noise-free volume, shape ``(n,)``, drawn in black.
    capacity
        ``unit`` per operator: the top panel then marks the volumes where the operators needed
        change (``k * capacity``) and gets an operator scale on its right.
    dates
        The moment of each sample (``datetime64``, shape ``(n,)``), e.g. a trace's recorded
        time (``simulator.model.workloads.TraceReplay.dates``); the axis shows seconds without it.
    unit
        The volume's unit, for the labels.

    The bottom panel also shows, dashed, the operators needed by the trend when the results have
    it (``timeline["needed_trend"]``), else those needed by their reference volume.
    """
    if not runs:
        raise ValueError("timeline_figure: runs is empty; give at least one SimulationResult")
    first = next(iter(runs.values())).timeline
    samples = first["volume"]
    for label, run in runs.items():
        if not np.array_equal(run.timeline["volume"], samples):
            raise ValueError(f"timeline_figure: run {label!r} is not over the same samples")
    times = _time_axis(first["t"], dates)
    if "needed_trend" in first:
        needed, needed_label = first["needed_trend"], "operators needed by the trend"
    else:
        reference = next(iter(runs.values())).reference
        needed, needed_label = first["needed"], f"operators needed by the {reference}"
    filtered = {label: run.timeline["filtered"] for label, run in runs.items()}
    operators = {label: run.timeline["operators"] for label, run in runs.items()}

    views = _views(samples.size)
    figure = _figure(len(views), height=7.5)
    grid = figure.subplots(
        2, len(views), sharex="col", squeeze=False, width_ratios=[2, 1][: len(views)],
        gridspec_kw={"height_ratios": [3, 2]},
    )  # fmt: skip
    for column, (view, binned) in enumerate(views):
        volume_axes, operator_axes = grid[0][column], grid[1][column]
        _draw_volume(volume_axes, times[view], samples[view], _cut(filtered, view),
                     None if trend is None else trend[view], binned, unit)  # fmt: skip
        if capacity is not None:
            _draw_thresholds(volume_axes, capacity, unit, scale=column == len(views) - 1)
        for label, counts in _in_drawing_order(operators):
            _draw_steps(operator_axes, times[view], counts[view], binned, label=label,
                        **run_style(label, list(runs)))  # fmt: skip
        _draw_steps(operator_axes, times[view], needed[view], binned, color="black",
                    linestyle="--", linewidth=1.2, zorder=4, label=needed_label)  # fmt: skip
        operator_axes.yaxis.set_major_locator(_whole_numbers())
        operator_axes.set_xlabel(_time_label(dates))
        if dates is not None:
            _concise_dates(operator_axes)
        if binned and len(views) > 1:
            _shade_excerpt(grid[:, 0], times, views[1][0])
        if not binned and len(views) > 1:
            volume_axes.set_title(_excerpt_title(views[1][0]), fontsize="medium")
    grid[1][0].set_ylabel("operators")
    _legend(figure, grid[0][0], grid[1][0], title)
    return figure


def plot_filtered(
    path: str | os.PathLike[str],
    times: np.ndarray,
    samples: np.ndarray,
    filtered: Mapping[str, np.ndarray],
    **options: Any,
) -> Path:
    """``filtered_figure(...)`` written to ``path`` as PNG; returns ``path``."""
    return _save(filtered_figure(times, samples, filtered, **options), path)


def filtered_figure(
    times: np.ndarray,
    samples: np.ndarray,
    filtered: Mapping[str, np.ndarray],
    *,
    title: str = "",
    trend: np.ndarray | None = None,
    xlabel: str = "time (s)",
    dates: np.ndarray | None = None,
    unit: str = "tuples/s",
) -> Figure:
    """One panel: ``samples``, ``trend`` and each filter's output over ``times``.

    ``filtered`` maps labels to outputs of shape ``(n,)``; ``raw`` (the samples themselves)
    gets no line of its own, ``default`` is drawn last and thickest (``run_style``). With
    ``dates`` (``datetime64``, shape ``(n,)``) the axis shows them instead of ``times``. A long
    series gets a zoomed excerpt beside it.
    """
    axis_values = times if dates is None else dates
    views = _views(samples.size)
    figure = _figure(len(views), height=5.0)
    grid = figure.subplots(1, len(views), squeeze=False, width_ratios=[2, 1][: len(views)])
    for column, (view, binned) in enumerate(views):
        axes = grid[0][column]
        _draw_volume(axes, axis_values[view], samples[view], _cut(filtered, view),
                     None if trend is None else trend[view], binned, unit)  # fmt: skip
        axes.set_xlabel(xlabel if dates is None else _time_label(dates))
        if dates is not None:
            _concise_dates(axes)
        if binned and len(views) > 1:
            _shade_excerpt(grid[:, 0], axis_values, views[1][0])
        if not binned and len(views) > 1:
            axes.set_title(_excerpt_title(views[1][0]), fontsize="medium")
    _legend(figure, grid[0][0], None, title)
    return figure


RAW = "raw"
DEFAULT = "default"
# The default's colour wherever it is drawn; the other runs take the rest of the cycle in turn.
DEFAULT_COLOUR = "C3"
_OTHER_COLOURS = [f"C{index}" for index in range(10) if f"C{index}" != DEFAULT_COLOUR]


def kind(label: str) -> str:
    """``"raw"``, ``"default"`` or ``"filter"``: what a run is, by its label's first word.

    >>> kind("raw"), kind("default"), kind("moving_average:w=60"), kind("tvd lam_per_sigma=10")
    ('raw', 'default', 'filter', 'filter')
    """
    first = label.replace(":", " ").split(" ", 1)[0]
    return first if first in (RAW, DEFAULT) else "filter"


def run_style(label: str, labels: list[str]) -> dict[str, Any]:
    """Colour, width, transparency and z-order of run ``label`` among ``labels``.

    Raw thresholding is faint and under everything; the default is thick and above everything,
    so that the product's own line is never hidden by the noise it ignores.
    """
    if kind(label) == DEFAULT:
        return {"color": DEFAULT_COLOUR, "linewidth": 2.2, "alpha": 1.0, "zorder": 10}
    others = [other for other in labels if kind(other) != DEFAULT]
    colour = _OTHER_COLOURS[others.index(label) % len(_OTHER_COLOURS)]
    if kind(label) == RAW:
        return {"color": colour, "linewidth": 0.8, "alpha": 0.3, "zorder": 1}
    return {"color": colour, "linewidth": 1.2, "alpha": 1.0, "zorder": 3}


def _in_drawing_order(series: Mapping[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
    """Raw first, the default last: each is drawn over what came before."""
    rank = {RAW: 0, "filter": 1, DEFAULT: 2}
    return sorted(series.items(), key=lambda item: rank[kind(item[0])])


def _save(figure: Figure, path: str | os.PathLike[str]) -> Path:
    figure.savefig(path, dpi=120)
    return Path(path)


def _views(size: int) -> list[tuple[slice, bool]]:
    """What to draw: the whole series (binned when long), and for a long one an excerpt."""
    if size <= MAX_POINTS:
        return [(slice(0, size), False)]
    middle = size // 2
    return [(slice(0, size), True), (slice(middle - EXCERPT // 2, middle + EXCERPT // 2), False)]


def _figure(columns: int, height: float) -> Figure:
    from matplotlib.figure import Figure  # slow to import; only figures need it

    return Figure(figsize=(12 if columns == 1 else 15, height), layout="constrained")


def _time_axis(seconds: np.ndarray, dates: np.ndarray | None) -> np.ndarray:
    if dates is None:
        return seconds
    if dates.shape != seconds.shape:
        raise ValueError(
            f"dates has shape {dates.shape}, the samples {seconds.shape}: give one per sample"
        )
    return dates


def _time_label(dates: np.ndarray | None) -> str:
    return "time (s)" if dates is None else "recorded time"


def _excerpt_title(view: slice) -> str:
    return f"excerpt: samples {view.start:,}-{view.stop - 1:,} at full resolution"


def _cut(series: Mapping[str, np.ndarray], view: slice) -> dict[str, np.ndarray]:
    return {label: values[view] for label, values in series.items()}


def _bins(size: int) -> tuple[np.ndarray, np.ndarray]:
    """Start index and length of ``BINS`` (or fewer) consecutive bins covering ``size`` items."""
    starts = np.unique(np.linspace(0, size, BINS, endpoint=False).astype(int))
    return starts, np.diff(np.append(starts, size))


def _binned(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per bin of ``_bins``: minimum, mean and maximum."""
    starts, lengths = _bins(values.size)
    low = np.minimum.reduceat(values, starts)
    high = np.maximum.reduceat(values, starts)
    return low, np.add.reduceat(values, starts) / lengths, high


def _centres(times: np.ndarray) -> np.ndarray:
    starts, lengths = _bins(times.size)
    centres: np.ndarray = times[starts + lengths // 2]
    return centres


def _draw_volume(
    axes: Axes,
    times: np.ndarray,
    samples: np.ndarray,
    filtered: Mapping[str, np.ndarray],
    trend: np.ndarray | None,
    binned: bool = False,
    unit: str = "tuples/s",
) -> None:
    if binned:
        low, _, high = _binned(samples)
        axes.fill_between(_centres(times), low, high, color="0.85", linewidth=0, zorder=1,
                          label="samples")  # fmt: skip
    else:
        axes.plot(times, samples, ".", color="0.7", markersize=2, zorder=1, label="samples")
    for label, values in _in_drawing_order(filtered):
        # Raw's line is the samples themselves: a line through every one would hide the rest.
        if kind(label) != RAW:
            x, y = (_centres(times), _binned(values)[1]) if binned else (times, values)
            axes.plot(x, y, label=label, **run_style(label, list(filtered)))
    if trend is not None:
        x, y = (_centres(times), _binned(trend)[1]) if binned else (times, trend)
        axes.plot(x, y, color="black", linewidth=1, zorder=4, label="trend")
    axes.set_ylabel(f"volume ({unit})")


def _draw_steps(
    axes: Axes, times: np.ndarray, counts: np.ndarray, binned: bool, **style: Any
) -> None:
    """A step line of operator counts; binned, a min-max band around the bin mean."""
    if not binned:
        axes.step(times, counts, where="post", **style)
        return
    low, mean, high = _binned(counts.astype(float))
    x = _centres(times)
    axes.fill_between(x, low, high, color=style["color"], alpha=0.15 * style.get("alpha", 1.0),
                      linewidth=0, zorder=style.get("zorder", 2) - 0.5)  # fmt: skip
    axes.plot(x, mean, **style)


def _draw_thresholds(axes: Axes, capacity: float, unit: str, scale: bool = True) -> None:
    """Light lines at each multiple of ``capacity`` in view, and an operator scale on the right."""
    low, high = axes.get_ylim()
    levels = np.arange(max(1, np.ceil(low / capacity)), np.floor(high / capacity) + 1) * capacity
    if levels.size <= MAX_THRESHOLD_LINES:
        for level in levels:
            axes.axhline(level, color="0.88", linewidth=0.6, zorder=0)
    if not scale:
        return
    right = axes.secondary_yaxis(
        "right",
        functions=(lambda v: np.divide(v, capacity), lambda n: np.multiply(n, capacity)),
    )
    right.yaxis.set_major_locator(_whole_numbers())
    right.set_ylabel(f"operators needed ({capacity:g} {unit} each)")


def _shade_excerpt(column: Any, times: np.ndarray, view: slice) -> None:
    """Shade the excerpt's span on the overview panels of ``column``."""
    for axes in column:
        axes.axvspan(times[view.start], times[view.stop - 1], color="C1", alpha=0.12,
                     linewidth=0, label="excerpt shown on the right")  # fmt: skip


def _legend(figure: Figure, volume: Axes, operators: Axes | None, title: str) -> None:
    """One legend below the panels, every entry once: never over the data."""
    entries: dict[str, Artist] = {}
    for axes in (volume, operators):
        if axes is None:
            continue
        handles, labels = axes.get_legend_handles_labels()
        for handle, label in zip(handles, labels, strict=True):
            # A run's operator line has the colour of its filtered line; name it once.
            entries.setdefault(label, handle)
    if title:
        figure.suptitle(title)
    figure.legend(list(entries.values()), list(entries), loc="outside lower center",
                  ncols=min(len(entries), 5), fontsize="small", frameon=False)  # fmt: skip


def _concise_dates(axes: Axes) -> None:
    """Date ticks that fit: the year or month once, then days or hours."""
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    locator = AutoDateLocator(maxticks=8)  # type: ignore[no-untyped-call]
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]


def _whole_numbers() -> Any:
    """A tick locator for counts: operators come in whole numbers."""
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)
