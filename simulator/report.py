"""Markdown tables and Pareto plots of summarised experiment rows (``simulator.experiment``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (the backend must be chosen first)
from matplotlib.ticker import NullFormatter  # noqa: E402

from simulator.experiment import pareto_front  # noqa: E402

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


def plot_pareto(
    path: Path,
    summary: Sequence[Mapping[str, Any]],
    snrs: Sequence[float],
    marked: Sequence[str] = (),
    title: str = "",
) -> Path:
    """Scaling operations against p± vs trend, one panel per SNR, one colour per filter.

    Each filter's own Pareto front is a line; the configurations in ``marked`` are circled.
    """
    figure, axes = plt.subplots(1, len(snrs), figsize=(4.2 * len(snrs), 4.0), squeeze=False)
    families = sorted({row["filter"] for row in summary})
    palette = plt.get_cmap("tab10")
    colours = {family: palette(index % 10) for index, family in enumerate(families)}
    for axis, snr in zip(axes[0], snrs, strict=True):
        panel = [row for row in summary if row["snr"] == snr]
        for family in families:
            points = [row for row in panel if row["filter"] == family]
            if not points:
                continue
            colour = colours[family]
            axis.scatter(
                [p["s_total"] for p in points],
                [p["p_total_trend"] for p in points],
                s=14,
                color=colour,
                alpha=0.6,
            )
            front = pareto_front(points)
            axis.plot(
                [p["s_total"] for p in front],
                [p["p_total_trend"] for p in front],
                color=colour,
                label=family,
                drawstyle="steps-post",
            )
        for row in panel:
            if row["config"] in marked:
                axis.scatter(
                    row["s_total"],
                    row["p_total_trend"],
                    s=80,
                    facecolors="none",
                    edgecolors="black",
                )
        axis.set_xscale("log")
        axis.xaxis.set_minor_formatter(NullFormatter())  # labelled minor ticks overlap
        axis.set_title(f"SNR {snr:g}")
        axis.set_xlabel("scaling operations s+ + s− (mean)")
        axis.grid(alpha=0.3)
    axes[0][0].set_ylabel("p+ + p− vs trend, s (mean)")
    axes[0][-1].legend(fontsize=8)
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
