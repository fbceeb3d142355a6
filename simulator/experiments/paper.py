"""The paper's experiment (Borkowski et al. 2017, §5) and the sweep that goes beyond it.

``paper_cells`` is the paper's grid: raw, moving average, TVD and EKF on ``paper_workload`` at
SNR 0.5, 0.8, 1.0, 5.0 and 10.0, under the ``power`` and the ``amplitude`` definitions of SNR,
over many seeds. ``sweep_cells`` adds each filter's parameter grid, composed with guards, for
Pareto fronts and the cost ranking. ``report`` writes the markdown tables.

Parameter rule (the same at every SNR; no filter is told the SNR or the noise level):

=================== ========================================================================
filter              parameters
=================== ========================================================================
``raw``             none
``moving_average``  ``w = 60``: one minute, the usual window of autoscaling metrics
``tvd``             ``make_filter("tvd")``: λ_t = 10 σ̂_t, σ̂_t estimated online from the
                    samples (``filters.noise.NoiseEstimator``)
``ekf``             ``make_filter("ekf")``: R_t = σ̂_t², the same online estimate;
                    process noise 0.01 (tuples/s²)²
=================== ========================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from scaling import ThresholdPolicy
from simulator.experiments.cells import (
    DEFAULT,
    ROW_COLUMNS,
    Cell,
    Config,
    build_scalers,
    config_label,
    noisy_trend,
    run_cells,
    summarize,
)
from simulator.experiments.paper_grid import (
    DEFINITIONS,
    ORACLE,
    PAPER_FILTERS,
    PAPER_GROUPS,
    SNRS,
    SUMMARY_METRICS,
    paper_cells,
    sweep_cells,
)
from simulator.experiments.paper_report import paper_markdown
from simulator.model.engine import simulate
from simulator.model.noise import noise_std
from simulator.model.workloads import paper_workload
from simulator.output.figures import plot_timeline
from simulator.output.pareto import plot_pareto
from simulator.output.tables import write_csv

Runner = Callable[[Sequence[Cell]], list[dict[str, Any]]]


def run_paper(
    out: Path,
    seeds: Sequence[int],
    sweep_seeds: Sequence[int] = (),
    definitions: Sequence[str] = DEFINITIONS,
    snrs: Sequence[float] = SNRS,
    runner: Runner | None = None,
    command: str = "steadyscale paper",
) -> dict[str, Path]:
    """Run the paper's grid (and the sweep, when ``sweep_seeds``), write tables and figures.

    ``runner`` runs a list of cells and returns their rows (default: serially in this process,
    with a progress bar). Returns the paths written, by name.
    """
    run = runner or _serial_runner
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    rows = run(paper_cells(seeds, definitions, snrs))
    summary = summarize(rows, by=PAPER_GROUPS, metrics=SUMMARY_METRICS)
    paths["paper_runs"] = write_csv(out / "paper_runs.csv", rows, ROW_COLUMNS)
    paths["paper"] = write_csv(out / "paper.csv", summary, _summary_columns(summary))
    sweep_rows: list[dict[str, Any]] = []
    sweep_summary: list[dict[str, Any]] = []
    if sweep_seeds:
        sweep_rows = run(sweep_cells(sweep_seeds, definitions, snrs))
        sweep_summary = summarize(sweep_rows, by=PAPER_GROUPS, metrics=SUMMARY_METRICS)
        paths["sweep_runs"] = write_csv(out / "paper_sweep_runs.csv", sweep_rows, ROW_COLUMNS)
        paths["sweep"] = write_csv(
            out / "paper_sweep.csv", sweep_summary, _summary_columns(sweep_summary)
        )
        # The default's star and the oracle's cross come from the paper's grid, over its seeds.
        special = [row for row in summary if row["config"] in (DEFAULT, ORACLE)]
        for definition in definitions:
            paths[f"pareto_{definition}"] = plot_pareto(
                out / f"pareto_{definition}.png",
                [row for row in sweep_summary + special if row["definition"] == definition],
                snrs,
                marked=[config_label(spec) for spec in PAPER_FILTERS.values()],
                marked_label="the paper's filters, by its rule",
                title=f"Pareto fronts, SNR definition {definition!r}: the sweep over "
                f"{len(sweep_seeds)} seeds; default and oracle over {len(seeds)} seeds",
            )
    for definition in definitions:
        for snr in snrs:
            name = f"timeline_{definition}_snr{snr:g}"
            paths[name] = _timeline_figure(out / f"{name}.png", seeds[0], snr, definition)
    text = paper_markdown(summary, sweep_rows, definitions, snrs, len(seeds), command)
    paths["report"] = out / "paper.md"
    paths["report"].write_text(text, encoding="utf-8")
    return paths


def _serial_runner(cells: Sequence[Cell]) -> list[dict[str, Any]]:
    with tqdm(total=len(cells), unit="run", desc="simulating", leave=False) as bar:
        return run_cells(cells, progress=bar.update)


def _summary_columns(summary: Sequence[Mapping[str, Any]]) -> list[str]:
    first = ["snr", "filter", "s_up", "s_down", "p_over", "p_under"]
    return first + [key for key in summary[0] if key not in first]


def _timeline_figure(path: Path, seed: int, snr: float, definition: str) -> Path:
    trend = paper_workload(seed)
    noisy = noisy_trend(trend, seed, snr, definition)
    policy = ThresholdPolicy(capacity=50.0)
    # Labelled with their settings (``moving_average w=60``), as in the tables.
    configs: dict[str, Config] = {config_label(spec): (spec, []) for spec in PAPER_FILTERS.values()}
    configs[DEFAULT] = (DEFAULT, [])
    scalers = build_scalers(configs, policy, policy.needed(float(trend[0])))
    runs = {label: simulate(scaler, noisy, trend=trend) for label, scaler in scalers.items()}
    sigma = noise_std(trend, snr, definition)
    title = f"paper_workload seed {seed}, SNR {snr:g} ({definition}, σ = {sigma:.0f} tuples/s)"
    return plot_timeline(path, runs, title=title, trend=trend, capacity=policy.capacity)
