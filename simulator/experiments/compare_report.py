"""A comparison run and reported: ``run_compare`` on Spark, ``compare.md`` and its plots.

``run_compare`` runs a grid of ``simulator.experiments.compare`` cells on the sweep engine
(``simulator.spark.store.run_stored``: batches on Spark, stored in ``DIR/cells.parquet``, a
rerun skips what is done) and writes ``DIR/compare.csv`` (one row per run), ``DIR/summary.csv``
(means and 95 % half-widths per workload, SNR and policy, computed in Spark),
``DIR/compare.md``, ``DIR/compare_<workload>.png`` and one timeline plot.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simulator.experiments.cells import summarize
from simulator.experiments.compare import (
    COMPARE_COLUMNS,
    COMPARE_METRICS,
    COST_MODEL,
    CompareCell,
    queue_run,
    run_compare_cell,
)
from simulator.output.tables import markdown_table, write_csv
from simulator.spark.store import run_stored

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def run_compare(cells: Sequence[CompareCell], out: Path, spark: Any) -> list[dict[str, Any]]:
    """Run ``cells`` on Spark (resumable), aggregate there, write the outputs; the summary."""
    from simulator.spark.cells import row_schema, summarize_spark

    schema = row_schema(
        COMPARE_COLUMNS,
        strings=("policy", "family", "policy_spec", "workload", "definition"),
        longs=("seed", "s_up", "s_down", "s_total"),
    )
    results = run_stored(cells, out, spark, run=run_compare_cell, schema=schema)
    rows = [row.asDict() for row in results.orderBy("grid_order").collect()]
    by = ("workload", "snr", "definition", "policy", "family")
    summary_df = summarize_spark(results, by=by, metrics=COMPARE_METRICS)
    order = {label: index for index, label in enumerate(dict.fromkeys(c.policy for c in cells))}
    summary = sorted(
        (row.asDict() for row in summary_df.collect()),
        key=lambda row: (row["workload"], row["snr"], order.get(row["policy"], len(order))),
    )
    write_csv(out / "compare.csv", rows, ["cell_id", *COMPARE_COLUMNS])
    columns = [*by, "n", *(f"{m}{s}" for m in COMPARE_METRICS for s in ("", "_ci"))]
    write_csv(out / "summary.csv", summary, columns)
    (out / "compare.md").write_text(compare_report(summary, rows), encoding="utf-8")
    for workload in dict.fromkeys(row["workload"] for row in summary):
        plot_tradeoff(out / f"compare_{_file_name(workload)}.png", workload, summary)
    if cells:
        first = cells[0]
        examples = {
            cell.policy: dataclasses.replace(first, policy=cell.policy, policy_spec=spec)
            for cell, spec in ((cell, cell.policy_spec) for cell in cells)
        }
        name = f"timeline_{_file_name(first.workload_label)}_snr{first.snr:g}.png"
        plot_timelines(out / name, list(examples.values()))
    return summary


def compare_report(
    summary: Sequence[Mapping[str, Any]], runs: Sequence[Mapping[str, Any]] = ()
) -> str:
    """Markdown: per workload and SNR, every policy's means, cheapest first, with the winner.

    ``runs`` (one row per run) give the standing table its intervals at each price.
    """
    parts = [
        "# steadyscale against the baselines",
        "Queue model (simulator.model.queue): arrivals = the noisy volume; 50 tuples/s per "
        "instance; 8 s without processing after each scaling operation; bounds 1..20 instances. "
        "s± = scaling operations; p+/p− = seconds above/below the count the noise-free trend "
        "needs; SLA s = seconds the queueing delay exceeds 10 s; cost = 30 × s± + "
        "operator-seconds + 5 × SLA s. Means over seeds (± 95 % half-width of the cost).",
    ]
    if any(row["policy"] == DEFAULT_POLICY for row in summary):
        parts += ["## Where the default stands", standing_table(summary, runs=runs)]
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for row in summary:
        groups.setdefault((row["workload"], row["snr"], row["definition"]), []).append(row)
    for (workload, snr, definition), rows in groups.items():
        ranked = sorted(rows, key=lambda row: row["cost"])
        table = markdown_table(
            ["policy", "s±", "p+ (s)", "p− (s)", "backlog max", "latency mean (s)", "SLA s",
             "operator-s", "cost"],
            [[f"**{row['policy']}**" if row["family"] == "steadyscale" else row["policy"],
              f"{row['s_total']:.1f}", f"{row['p_over']:.0f}", f"{row['p_under']:.0f}",
              f"{row['backlog_max']:.0f}", f"{row['latency_mean']:.2f}",
              f"{row['sla_seconds']:.0f}", f"{row['operator_seconds']:.0f}",
              f"{row['cost']:.0f} ± {row['cost_ci']:.0f}"] for row in ranked],
        )  # fmt: skip
        parts += [f"## {workload}, SNR {snr:g} (`{definition}`)", table]
    return "\n\n".join(parts) + "\n"


DEFAULT_POLICY = "steadyscale"


def standing_table(
    summary: Sequence[Mapping[str, Any]],
    policy: str = DEFAULT_POLICY,
    prices: Sequence[float] = (5.0, 50.0),
    runs: Sequence[Mapping[str, Any]] = (),
) -> str:
    """Per workload and SNR: ``policy``'s cost over the cheapest policy's at each price of an
    SLA second (the cheapest named), whether it is the cheapest or within the cheapest's 95 %
    interval, and its SLA seconds against the HPA's (``standing_cells``), as a sentence of the
    counts and a table."""
    lines, wins = standing_cells(summary, policy, prices, runs)
    headers = ["workload", "SNR", *(f"cost / cheapest at {p:g} per SLA s" for p in prices),
               f"SLA s, `{policy}` / `hpa`"]  # fmt: skip
    total = len(lines)
    summary_line = "; ".join(
        f"at {price:g} per SLA second `{policy}` is the cheapest or within its interval in "
        f"{count} of {total} cells"
        for price, count in wins.items()
    )
    return summary_line + ".\n\n" + markdown_table(headers, lines)


def standing_cells(
    summary: Sequence[Mapping[str, Any]],
    policy: str = DEFAULT_POLICY,
    prices: Sequence[float] = (5.0, 50.0),
    runs: Sequence[Mapping[str, Any]] = (),
) -> tuple[list[list[str]], dict[float, int]]:
    """The rows of ``standing_table`` and, per price, the cells where ``policy`` is the
    cheapest or within the cheapest's interval.

    At a price ``c`` per SLA second, a row's cost is its ``cost`` + (c − 5) × ``sla_seconds``
    (``cost`` is priced at 5). The interval is the 95 % half-width of that priced cost over the
    ``runs`` (one row per seed) when they are given; without them, the cheapest's ``cost_ci``,
    which is exact at 5 only (a price that weighs SLA seconds more widens the interval by
    their spread).
    """
    groups: dict[tuple[Any, ...], dict[str, Mapping[str, Any]]] = {}
    for row in summary:
        groups.setdefault((row["workload"], row["snr"]), {})[row["policy"]] = row
    intervals: dict[tuple[Any, ...], float] = {}
    for price in prices if runs else ():
        priced = [{**run, "priced": priced_cost(run, price)} for run in runs]
        for entry in summarize(priced, by=("workload", "snr", "policy"), metrics=("priced",)):
            key = (entry["workload"], entry["snr"], entry["policy"], price)
            intervals[key] = entry["priced_ci"]
    lines, wins = [], dict.fromkeys(prices, 0)
    for (workload, snr), rows in groups.items():
        if policy not in rows:
            continue
        mine = rows[policy]
        cells = [workload, f"{snr:g}"]
        for price in prices:
            best = min(rows.values(), key=partial(priced_cost, price=price))
            interval = intervals.get((workload, snr, best["policy"], price), float(best["cost_ci"]))
            tied = priced_cost(mine, price) <= priced_cost(best, price) + interval
            wins[price] += tied
            verdict = "cheapest" if best is mine else "within" if tied else best["policy"]
            cells.append(f"{priced_cost(mine, price) / priced_cost(best, price):.3f} ({verdict})")
        hpa = rows.get("hpa")
        cells.append(f"{mine['sla_seconds']:.0f} / {hpa['sla_seconds']:.0f}" if hpa else "–")
        lines.append(cells)
    return lines, wins


def priced_cost(row: Mapping[str, Any], price: float) -> float:
    """A row's cost with an SLA second at ``price`` instead of the cost model's."""
    extra = price - COST_MODEL.per_under_second
    return float(row["cost"]) + extra * float(row["sla_seconds"])


def plot_tradeoff(path: Path, workload: str, summary: Sequence[Mapping[str, Any]]) -> None:
    """Scaling operations against seconds over the SLA, one panel per SNR, one point per policy.

    Points carry a number, the same in every panel, that the legend below names: labels written
    out would pile up where several policies land together (the slow ones, top left).
    steadyscale's configurations are blue circles, the default (``DEFAULT_POLICY``, what a user
    gets) a larger star, the baselines red squares.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    rows = [row for row in summary if row["workload"] == workload]
    snrs = sorted({row["snr"] for row in rows})
    numbers = {
        policy: index + 1 for index, policy in enumerate(dict.fromkeys(r["policy"] for r in rows))
    }
    figure, axes = plt.subplots(1, len(snrs), figsize=(5.2 * len(snrs), 4.4), squeeze=False)
    for axis, snr in zip(axes[0], snrs, strict=True):
        placed: list[tuple[float, float]] = []
        for row in sorted((r for r in rows if r["snr"] == snr), key=lambda r: r["sla_seconds"]):
            point = (row["s_total"] + 1, row["sla_seconds"] + 1)
            style = _marker(row)
            axis.scatter(*point, **style, zorder=3)
            # Nudge the number up, a line at a time, until it clears the numbers already
            # written: positions in decades of the log axes (a line is about 0.1 decade).
            x, y = math.log10(point[0]), math.log10(point[1])
            lines = 0
            while any(abs(x - px) < 0.08 and abs(y + 0.1 * lines - py) < 0.09 for px, py in placed):
                lines += 1
            placed.append((x, y + 0.1 * lines))
            axis.annotate(str(numbers[row["policy"]]), point, xytext=(4, 2 + 8 * lines),
                          textcoords="offset points", fontsize=7)  # fmt: skip
        axis.set_xscale("log")
        axis.set_yscale("log")
        bottom, top = axis.get_ylim()
        axis.set_ylim(bottom, top * 4)  # room for the numbers above the highest points
        axis.set_title(f"SNR {snr:g}")
        axis.set_xlabel("scaling operations + 1")
        axis.set_ylabel("seconds over the SLA + 1")
    handles = [
        Line2D(
            [],
            [],
            linestyle="",
            label=f"{number} {policy}" + (" (the default)" if policy == DEFAULT_POLICY else ""),
            **_legend_marker(policy, rows),
        )
        for policy, number in numbers.items()
    ]
    figure.legend(handles=handles, loc="lower center", ncol=4, fontsize=7, frameon=False)
    figure.suptitle(
        f"{workload}: each point a policy (mean over seeds); lower left is better. "
        "Star: steadyscale's default; circles: other steadyscale settings; squares: baselines"
    )
    rows_of_legend = -(-len(numbers) // 4)
    figure.tight_layout(rect=(0, 0.035 * rows_of_legend + 0.02, 1, 1))
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _marker(row: Mapping[str, Any]) -> dict[str, Any]:
    if row["policy"] == DEFAULT_POLICY:
        return {"marker": "*", "color": "C0", "s": 150, "edgecolors": "black", "linewidths": 0.6}
    ours = row["family"] == "steadyscale"
    return {"marker": "o" if ours else "s", "color": "C0" if ours else "C3", "s": 36}


def _legend_marker(policy: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    style = _marker(next(row for row in rows if row["policy"] == policy))
    size = 11 if style["marker"] == "*" else 6
    return {"marker": style["marker"], "color": style["color"], "markersize": size}


def plot_timelines(path: Path, cells: Sequence[CompareCell]) -> None:
    """``timeline_figure(cells)`` written to ``path`` as PNG."""
    timeline_figure(cells).savefig(path, dpi=100)


def timeline_figure(cells: Sequence[CompareCell]) -> Figure:
    """Running instances and backlog over time for each policy on the same noisy workload.

    One panel per cell: instances running and needed by the trend on the left axis, the backlog
    (tuples waiting) shaded under them on an axis of its own on the right.
    """
    from matplotlib.figure import Figure

    height = 1.7 * len(cells)
    figure = Figure(figsize=(10, height))
    axes = figure.subplots(len(cells), 1, sharex=True, squeeze=False)[:, 0]
    backlogs = []
    for axis, cell in zip(axes, cells, strict=True):
        trend, result = queue_run(cell)
        timeline = result.timeline
        backlog = axis.twinx()  # drawn under the counts, which keep the left axis
        backlog.fill_between(timeline["t"], timeline["backlog"], color="C3", alpha=0.25, lw=0)
        backlog.set_ylim(bottom=0)
        backlog.tick_params(axis="y", labelsize=7, colors="C3")
        backlog.set_ylabel("backlog (tuples)", fontsize=7, color="C3")
        backlogs.append(backlog)
        axis.set_zorder(backlog.get_zorder() + 1)
        axis.patch.set_visible(False)
        axis.step(timeline["t"], timeline["needed"], where="post", color="0.5", lw=1)
        axis.step(timeline["t"], timeline["operators"], where="post", color="C0", lw=1.3)
        axis.set_ylabel("instances", fontsize=7)
        axis.tick_params(axis="y", labelsize=7)
        axis.set_title(cell.policy, fontsize=8, loc="left")
    figure.suptitle(
        f"{cells[0].workload_label}, SNR {cells[0].snr:g}, seed {cells[0].seed}: instances "
        "running (blue, left axis), needed by the trend (grey), backlog (red, right axis)",
        fontsize=9,
    )
    axes[-1].set_xlabel("time (s)")
    figure.tight_layout(rect=(0.0, 0.0, 1.0, 1.0 - 0.35 / height))  # the title above
    return figure


def _file_name(label: str) -> str:
    return label.replace(":", "_").replace("/", "_")
