"""Pareto fronts of summarised runs, and their plots: scaling operations against p± vs trend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from simulator.output.tables import DEFAULT_CONFIG, ORACLE_CONFIG

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox


FRONT_LABELS = 5
"""Labels per panel at most: more write over each other."""


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


def plot_pareto(path: Path, *args: Any, **options: Any) -> Path:
    """``pareto_figure(*args, **options)`` written to ``path`` as PNG; returns ``path``."""
    pareto_figure(*args, **options).savefig(path, dpi=110)
    return path


def pareto_figure(
    summary: Sequence[Mapping[str, Any]],
    snrs: Sequence[float],
    marked: Sequence[str] = (),
    title: str = "",
    marked_label: str = "marked settings",
) -> Figure:
    """Scaling operations against p± vs trend: one readable panel per SNR, one colour per filter.

    Every configuration is an unlabelled dot, and each filter's own Pareto front a thin line
    through its best configurations. Only the panel's overall front (the configurations no
    other beats on both axes) is labelled with its settings, so that a panel holds a handful of
    labels however big the grid. Rows named ``default`` (steadyscale's default) get a labelled
    star and ``oracle`` (thresholding the noise-free trend) a cross; the configurations in
    ``marked`` are ringed (``marked_label`` says what they are in the legend). One legend below
    the panels explains every marker. The scaling axis is logarithmic only when its values span
    more than a factor of 20, with plain numbers at 1, 2, 5 x 10^k.
    """
    from matplotlib.figure import Figure

    columns = min(3, max(1, len(snrs)))
    rows = -(-len(snrs) // columns)
    figure = Figure(figsize=(6.2 * columns, 5.0 * rows + 0.8), layout="constrained")
    grid = figure.subplots(rows, columns, squeeze=False)
    special = (DEFAULT_CONFIG, ORACLE_CONFIG)
    families = sorted({row["filter"] for row in summary if row["config"] not in special})
    colours = {family: f"C{index % 10}" for index, family in enumerate(families)}
    for index, snr in enumerate(snrs):
        axes = grid[index // columns][index % columns]
        panel = [row for row in summary if row["snr"] == snr]
        settings = [row for row in panel if row["config"] not in special]
        for family in families:
            points = [row for row in settings if row["filter"] == family]
            if points:
                _draw_family(axes, points, colours[family])
        for row in panel:
            _draw_special(axes, row, marked)
        _label_front(axes, pareto_front(settings), colours)
        _pareto_axes(axes, panel, snr)
    for index in range(len(snrs), rows * columns):
        grid[index // columns][index % columns].set_visible(False)
    for row_axes in grid:
        row_axes[0].set_ylabel("p+ + p− vs trend, s (mean per run)")
    _pareto_legend(figure, families, colours, summary, marked, marked_label)
    if title:
        figure.suptitle(title)
    # Labels take their size on the page only once the panels are laid out; they are left out
    # of the layout, so that moving them apart does not move the panels under them.
    figure.draw_without_rendering()
    for axes in grid.flat[: len(snrs)]:
        _separate_labels(axes)
    return figure


def _setting(row: Mapping[str, Any]) -> str:
    """The configuration without its filter's name: ``w=60 + hysteresis band=0.02``."""
    text = str(row["config"]).removeprefix(str(row["filter"])).strip()
    return text.removeprefix("+ ") if text.startswith("+ ") else text or str(row["filter"])


def _draw_family(axes: Axes, points: Sequence[Mapping[str, Any]], colour: str) -> None:
    axes.scatter(
        [p["s_total"] for p in points],
        [p["p_total_trend"] for p in points],
        s=14,
        color=colour,
        alpha=0.45,
        linewidths=0,
        zorder=2,
    )
    front = pareto_front(points)
    axes.plot(
        [p["s_total"] for p in front],
        [p["p_total_trend"] for p in front],
        color=colour,
        drawstyle="steps-post",
        linewidth=1.0,
        alpha=0.8,
        zorder=3,
    )


def _label_front(
    axes: Axes, front: Sequence[Mapping[str, Any]], colours: Mapping[str, str]
) -> None:
    """The overall front's configurations, ringed in their filter's colour; at most
    ``FRONT_LABELS`` of them, evenly spread along it, labelled."""
    every = -(-len(front) // FRONT_LABELS)
    for index, point in enumerate(front):
        xy = (point["s_total"], point["p_total_trend"])
        colour = colours[point["filter"]]
        axes.scatter(*xy, s=40, facecolors="none", edgecolors=colour, linewidths=1.2, zorder=4)
        if index % every:
            continue
        # Right and left in turn: neighbours on a steep front would otherwise write over each other.
        right = (index // every) % 2 == 0
        axes.annotate(
            str(point["config"]),
            xy,
            xytext=(6 if right else -6, 2),
            textcoords="offset points",
            ha="left" if right else "right",
            fontsize=7,
            color=colour,
            zorder=6,
            in_layout=False,
            # A leader to its point, shown only if the label has to move (_separate_labels).
            arrowprops={"arrowstyle": "-", "color": colour, "linewidth": 0.6, "shrinkB": 3},
        ).arrow_patch.set_visible(False)  # type: ignore[union-attr]


LABEL_STEPS = 4
"""Label heights a label may move up or down to clear the labels written before it."""

Alignment = Literal["left", "center", "right"]


class Place(NamedTuple):
    """Where a label may go: its offset from its point (points), alignment, box on the page."""

    offset: tuple[float, float]
    alignment: Alignment
    box: Bbox


def _separate_labels(axes: Axes) -> None:
    """Move each label of ``axes`` that would write over one written before it (the default's
    first, then the front's from the fewest operations on) to the nearest place where it
    writes over none: a label's height lower or higher, then further, then on the other side
    of its point, with a leader to its point. A place inside the panel is preferred.
    Deterministic: the same figure gets the same places. Call once the figure is laid out
    (``draw_without_rendering``)."""
    frame = axes.get_window_extent()
    placed: list[Bbox] = []
    for label in axes.texts:
        places = _places(label)
        free = [place for place in places if not any(_overlap(place.box, box) for box in placed)]
        inside = [place for place in free if _within(place.box, frame)]
        chosen = (inside or free or places)[0]
        label.set_position(chosen.offset)
        label.set_horizontalalignment(chosen.alignment)
        placed.append(chosen.box)
        leader = getattr(label, "arrow_patch", None)
        if leader is not None and chosen is not places[0]:
            leader.set_visible(True)


def _places(label: Text) -> list[Place]:
    """Where ``label`` may go, nearest first; leaves it where it was."""
    x, y = label.get_position()
    alignment = label.get_horizontalalignment()
    flipped: Alignment = {"left": "right", "right": "left"}.get(alignment, alignment)  # type: ignore[assignment]
    step = text_box(label).height * 72 / label.figure.dpi + 1.0
    shifts = [0.0] + [sign * k * step for k in range(1, LABEL_STEPS + 1) for sign in (-1, 1)]
    places = []
    for side, side_alignment in ((x, alignment), (-x, flipped)):
        for shift in shifts:
            label.set_position((side, y + shift))
            label.set_horizontalalignment(side_alignment)
            places.append(Place((side, y + shift), side_alignment, text_box(label)))
    label.set_position((x, y))
    label.set_horizontalalignment(alignment)
    return places


def text_box(label: Text) -> Bbox:
    """The box ``label``'s text covers on the page, without its leader; after a draw."""
    from matplotlib.text import Text

    label.get_window_extent()  # an annotation's place follows its point's only from here
    return Text.get_window_extent(label)


def _overlap(first: Bbox, second: Bbox) -> bool:
    """Whether two boxes on the page share any area (touching edges do not count)."""
    width = min(first.x1, second.x1) - max(first.x0, second.x0)
    height = min(first.y1, second.y1) - max(first.y0, second.y0)
    return bool(width > 0 and height > 0)


def _within(box: Bbox, frame: Bbox) -> bool:
    return bool(
        frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
    )


def _draw_special(axes: Axes, row: Mapping[str, Any], marked: Sequence[str]) -> None:
    """The default's star, labelled; the oracle's cross; the rings of ``marked``."""
    xy = (row["s_total"], row["p_total_trend"])
    if row["config"] == DEFAULT_CONFIG:
        axes.scatter(*xy, marker="*", s=220, color="gold", edgecolors="black", zorder=7)
        axes.annotate("default", xy, xytext=(7, -11), textcoords="offset points",
                      fontsize=8, fontweight="bold", zorder=7, in_layout=False)  # fmt: skip
    elif row["config"] == ORACLE_CONFIG:
        axes.scatter(*xy, marker="X", s=90, color="black", zorder=7)
    elif row["config"] in marked:
        axes.scatter(*xy, s=110, facecolors="none", edgecolors="black", linewidths=1.0, zorder=5)


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
            label="dots: every setting; line: the filter's Pareto front",
        )
    )
    handles.append(
        Line2D(
            [],
            [],
            linestyle="",
            marker="o",
            markersize=6,
            markerfacecolor="none",
            color="0.3",
            label="ringed, labelled: the front of all settings (none beats them on both axes)",
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
