"""Markdown tables and Pareto plots of summarised experiment rows (``simulator.experiment``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simulator.experiment import pareto_front

if TYPE_CHECKING:
    from matplotlib.axes import Axes

DEFINITIONS_TEXT = """\
Definitions. Needed operators at t: max(1, ceil(v_t / 50)) for the reference volume v (capacity 50
tuples/s per operator). s+ / s−: decisions that raise / lower the operator count. p+ / p−: seconds
the running operator count is above / below the count needed by the reference volume: the noisy
volume (the paper's view; raw thresholding scores 0 by construction) or the noise-free trend
("vs trend", the measure of a filter's quality). SNR `power`: mean(trend²) / σ²; `amplitude`:
mean(trend) / σ (the Rose-criterion form). Gaussian noise, volumes clipped at 0. 1,500 s of
`paper_workload` at one sample per second; each run starts with the operators its trend needs
at t = 0. Values are means ± the half-width of the 95 % confidence interval (Student t) over
the seeds."""


def mean_ci(row: Mapping[str, Any], metric: str, digits: int = 0) -> str:
    """``"123 ± 4"``: the mean of ``metric`` and its confidence half-width.

    >>> mean_ci({"s_up": 12.345, "s_up_ci": 1.2}, "s_up", 1)
    '12.3 ± 1.2'
    """
    return f"{row[metric]:.{digits}f} ± {row[metric + '_ci']:.{digits}f}"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub markdown table.

    >>> print(markdown_table(["a", "b"], [["1", "2"]]))
    | a | b |
    |---|---|
    | 1 | 2 |
    """
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def metric_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Mapping[str, str],
    baseline: Mapping[str, Any] | None = None,
) -> str:
    """One row per configuration; ``columns`` maps metric → header; the best mean in bold.

    With ``baseline`` (a row), a last column gives the cut in s+ + s− relative to it.
    """
    best = {metric: min(row[metric] for row in rows) for metric in columns}
    lines = []
    for row in rows:
        cells = [f"`{row['config']}`"]
        for metric in columns:
            text = mean_ci(row, metric)
            cells.append(f"**{text}**" if row[metric] == best[metric] else text)
        if baseline is not None:
            cells.append(f"{cut(row, baseline):.1f} %")
        lines.append(cells)
    headers = ["configuration", *columns.values()]
    if baseline is not None:
        headers.append(f"cut in s± vs `{baseline['config']}`")
    return markdown_table(headers, lines)


def cut(row: Mapping[str, Any], baseline: Mapping[str, Any], metric: str = "s_total") -> float:
    """How much lower ``row``'s mean ``metric`` is than ``baseline``'s, in percent."""
    reference = float(baseline[metric])
    return 100.0 * (1.0 - float(row[metric]) / reference) if reference else 0.0


DEFAULT_CONFIG = "default"
ORACLE_CONFIG = "oracle"


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
