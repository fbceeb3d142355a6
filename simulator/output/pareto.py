"""Pareto fronts of summarised runs, and their plots: scaling operations against p± vs trend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simulator.output.tables import DEFAULT_CONFIG, ORACLE_CONFIG

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def pareto_front(
    points: Sequence[Mapping[str, Any]], x: str = "s_total", y: str = "p_total_trend"
) -> list[Mapping[str, Any]]:
    """The points no other point beats on both ``x`` and ``y`` (lower is better), by ``x``.

    A point is dropped when another is at least as good on both and better on one.

    >>> points = [{"s_total": 1, "p_total_trend": 9}, {"s_total": 5, "p_total_trend": 2},
    ...           {"s_total": 6, "p_total_trend": 9}, {"s_total": 3, "p_total_trend": 4}]
    >>> [(p["s_total"], p["p_total_trend"]) for p in pareto_front(points)]
    [(1, 9), (3, 4), (5, 2)]
    """
    ordered = sorted(points, key=lambda point: (point[x], point[y]))
    front: list[Mapping[str, Any]] = []
    for point in ordered:
        if not front or point[y] < front[-1][y]:
            front.append(point)
    return front


def plot_pareto(
    path: Path,
    summary: Sequence[Mapping[str, Any]],
    snrs: Sequence[float],
    marked: Sequence[str] = (),
    title: str = "",
    marked_label: str = "marked settings",
) -> Path:
    """Scaling operations against p± vs trend: one readable panel per SNR, one colour per filter.

    Every configuration is a dot; each filter's own Pareto front is a line through its best
    configurations, and those are labelled with their setting, so that a point can be told
    from another. The configurations in ``marked`` are ringed in black and labelled
    (``marked_label`` says what they are in the legend); rows named ``default`` (steadyscale's
    default) get a star and ``oracle`` (thresholding the noise-free trend) a cross. One legend
    below the panels explains every marker. The scaling axis is logarithmic only when its
    values span more than a factor of 20, with plain numbers at 1, 2, 5 x 10^k.
    """
    from matplotlib.figure import Figure

    columns = min(3, max(1, len(snrs)))
    rows = -(-len(snrs) // columns)
    figure = Figure(figsize=(6.2 * columns, 5.0 * rows + 0.8), layout="constrained")
    grid = figure.subplots(rows, columns, squeeze=False)
    families = sorted({row["filter"] for row in summary} - {ORACLE_CONFIG})
    colours = {family: f"C{index % 10}" for index, family in enumerate(families)}
    for index, snr in enumerate(snrs):
        axes = grid[index // columns][index % columns]
        panel = [row for row in summary if row["snr"] == snr]
        for family in families:
            points = [
                row
                for row in panel
                if row["filter"] == family and row["config"] not in (DEFAULT_CONFIG, ORACLE_CONFIG)
            ]
            if points:
                _draw_family(axes, points, family, colours[family])
        for row in panel:
            _draw_special(axes, row, marked)
        _pareto_axes(axes, panel, snr)
    for index in range(len(snrs), rows * columns):
        grid[index // columns][index % columns].set_visible(False)
    grid[0][0].set_ylabel("p+ + p− vs trend, s (mean)")
    _pareto_legend(figure, families, colours, summary, marked, marked_label)
    if title:
        figure.suptitle(title)
    figure.savefig(path, dpi=110)
    return path


def _setting(row: Mapping[str, Any]) -> str:
    """The configuration without its filter's name: ``w=60 + hysteresis band=0.02``."""
    text = str(row["config"]).removeprefix(str(row["filter"])).strip()
    return text.removeprefix("+ ") if text.startswith("+ ") else text or str(row["filter"])


def _draw_family(axes: Axes, points: Sequence[Mapping[str, Any]], family: str, colour: str) -> None:
    axes.scatter(
        [p["s_total"] for p in points],
        [p["p_total_trend"] for p in points],
        s=16,
        color=colour,
        alpha=0.45,
        linewidths=0,
    )
    front = pareto_front(points)
    axes.plot(
        [p["s_total"] for p in front],
        [p["p_total_trend"] for p in front],
        color=colour,
        drawstyle="steps-post",
        linewidth=1.4,
    )
    # Above and below in turn: neighbours on a steep front would otherwise write over each other.
    for index, point in enumerate(front):
        axes.annotate(
            _setting(point),
            (point["s_total"], point["p_total_trend"]),
            xytext=(4, 3 if index % 2 == 0 else -9),
            textcoords="offset points",
            fontsize=7,
            color=colour,
        )


def _draw_special(axes: Axes, row: Mapping[str, Any], marked: Sequence[str]) -> None:
    """The default's star, the oracle's cross and the rings of ``marked``, labelled."""
    xy = (row["s_total"], row["p_total_trend"])
    if row["config"] == DEFAULT_CONFIG:
        axes.scatter(*xy, marker="*", s=160, color="gold", edgecolors="black", zorder=5)
    elif row["config"] == ORACLE_CONFIG:
        axes.scatter(*xy, marker="X", s=90, color="black", zorder=5)
    elif row["config"] in marked:
        axes.scatter(*xy, s=90, facecolors="none", edgecolors="black", linewidths=1.2, zorder=5)
    else:
        return
    axes.annotate(
        str(row["config"]),
        xy,
        xytext=(5, -10),
        textcoords="offset points",
        fontsize=7.5,
        fontweight="bold",
    )


def _pareto_axes(axes: Axes, panel: Sequence[Mapping[str, Any]], snr: float) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    scaling = [row["s_total"] for row in panel if row["s_total"] > 0]
    if scaling and max(scaling) / min(scaling) > 20:
        axes.set_xscale("log")
        axes.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axes.xaxis.set_minor_formatter(NullFormatter())
    axes.margins(x=0.18, y=0.08)  # room for the labels of the outermost points
    axes.set_title(f"SNR {snr:g}")
    axes.set_xlabel("scaling operations s+ + s− (mean per run)")
    axes.grid(alpha=0.3)


def _pareto_legend(
    figure: Any,
    families: Sequence[str],
    colours: Mapping[str, str],
    summary: Sequence[Mapping[str, Any]],
    marked: Sequence[str],
    marked_label: str,
) -> None:
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], color=colours[f], marker="o", markersize=4, label=f) for f in families
    ]
    handles.append(
        Line2D(
            [],
            [],
            color="0.3",
            label="line: the filter's Pareto front (labelled: its settings); dots: every setting",
        )
    )
    configs = {row["config"] for row in summary}
    if DEFAULT_CONFIG in configs:
        handles.append(
            Line2D(
                [],
                [],
                linestyle="",
                marker="*",
                markersize=12,
                color="gold",
                markeredgecolor="black",
                label="steadyscale's default",
            )
        )
    if ORACLE_CONFIG in configs:
        handles.append(
            Line2D(
                [],
                [],
                linestyle="",
                marker="X",
                markersize=8,
                color="black",
                label="oracle: thresholding the noise-free trend",
            )
        )
    if configs & set(marked):
        handles.append(
            Line2D(
                [],
                [],
                linestyle="",
                marker="o",
                markersize=9,
                markerfacecolor="none",
                color="black",
                label=marked_label,
            )
        )
    figure.legend(
        handles=handles,
        loc="outside lower center",
        ncols=min(len(handles), 4),
        fontsize="small",
        frameon=False,
    )
