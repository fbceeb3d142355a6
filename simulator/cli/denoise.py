"""``steadyscale denoise``: filters over a volume series; the filtered series, a plot, a summary."""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from filters import make_filter
from scaling import default_spec
from simulator.cli import options
from simulator.cli.options import Commands, add_command, add_list
from simulator.experiments.cells import DEFAULT, noisy_trend
from simulator.model.traces import read_trace, trace_start
from simulator.model.workloads import paper_workload
from simulator.output.tables import write_columns


@dataclass(frozen=True)
class Series:
    """A volume series: timestamps as written, seconds since the first, samples, trend."""

    label: str
    timestamps: list[str]
    seconds: np.ndarray
    values: np.ndarray
    trend: np.ndarray | None = None
    dates: np.ndarray | None = None


def add(commands: Commands) -> None:
    denoise = add_command(
        commands,
        "denoise",
        run,
        help="run filters over a volume series and write the results",
        description=(
            "Run filters over a volume series (a CSV file with the columns timestamp,value, or "
            "the paper workload plus Gaussian noise) and write DIR/filtered.csv, "
            "DIR/denoise.png and a summary."
        ),
    )
    denoise.add_argument("--input", metavar="PATH", help="CSV with header timestamp,value")
    add_list(
        denoise,
        "--filter",
        metavar="SPEC",
        help="filter specs, | for several settings, or default: steadyscale's default filter "
        "(default: default, raw, moving_average:w=60, ewma:alpha=0.05, tvd, ekf; default, tvd "
        "and ekf adapt to the noise)",
    )
    denoise.add_argument(
        "--capacity",
        type=float,
        default=50.0,
        help="the values per operator: default's resolution, the smallest change that matters "
        "(%(default)g)",
    )
    denoise.add_argument("--out", default="out/denoise", metavar="DIR", help="default: %(default)s")
    denoise.add_argument("--unit", default="tuples/s", help="the values' unit (%(default)s)")
    denoise.add_argument(
        "--noise-std", type=float, default=50.0, help="demo only: noise deviation (%(default)s)"
    )
    denoise.add_argument("--seed", type=int, default=1, help="demo only: seed (%(default)s)")


def run(args: argparse.Namespace) -> int:
    options.require("matplotlib")
    series = _read_series(Path(args.input)) if args.input else _demo(args.noise_std, args.seed)
    rule = options.PAPER_RULE
    texts = args.filter or [DEFAULT, *rule[:2], "ewma:alpha=0.05", *rule[2:]]
    # Build every filter before running any, so that a bad spec fails fast.
    settings = options.filter_settings(texts, keep=[DEFAULT])
    options.finite_at_least("--capacity", args.capacity, 1e-3)
    settings = {
        label: default_spec(args.capacity)["filter"] if spec == DEFAULT else spec
        for label, spec in settings.items()
    }
    denoisers = {label: make_filter(spec) for label, spec in settings.items()}
    outputs: dict[str, np.ndarray] = {}
    for label, denoiser in denoisers.items():
        print(f"{label} ...", end="", file=sys.stderr, flush=True)
        start = time.perf_counter()
        outputs[label] = denoiser.filter(series.values)
        print(f" {time.perf_counter() - start:.2f} s", file=sys.stderr)

    from simulator.output.figures import plot_filtered

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_columns(
        out / "filtered.csv",
        {"timestamp": series.timestamps, "value": series.values.tolist()}
        | {label: filtered.tolist() for label, filtered in outputs.items()},
    )
    plot_filtered(
        out / "denoise.png",
        series.seconds,
        series.values,
        outputs,
        title=series.label,
        trend=series.trend,
        xlabel="time since the first sample (s)",
        dates=series.dates,
        unit=args.unit,
    )
    _print_summary(series, outputs)
    print(f"wrote {out / 'filtered.csv'}")
    print(f"wrote {out / 'denoise.png'}")
    return 0


def _demo(noise_std: float, seed: int) -> Series:
    """The paper workload plus Gaussian noise of deviation ``noise_std``."""
    options.finite_at_least("--noise-std", noise_std, 0.0)
    trend = paper_workload(seed)
    # The amplitude ratio mean(trend) / σ is the one that fixes σ directly.
    snr = float(np.mean(trend)) / noise_std if noise_std > 0 else math.inf
    values = noisy_trend(trend, seed, snr, "amplitude")
    seconds = np.arange(trend.size)
    label = f"demo: paper workload + Gaussian noise, std {noise_std:g}, seed {seed}"
    return Series(label, [str(s) for s in seconds.tolist()], seconds.astype(float), values, trend)


def _read_series(path: Path) -> Series:
    seconds, values = read_trace(path)
    # read_trace has checked the file; the timestamps are kept as written for the output.
    with path.open(newline="", encoding="utf-8") as file:
        timestamps = [row["timestamp"] for row in csv.DictReader(file)]
    start = trace_start(path)
    dates = None
    if start is not None:
        dates = np.datetime64(start, "ms") + np.round(seconds * 1000).astype("timedelta64[ms]")
    return Series(str(path), timestamps, seconds, values, dates=dates)


def _print_summary(series: Series, outputs: dict[str, np.ndarray]) -> None:
    width = max(len("filter"), *map(len, outputs))
    header = f"{'filter':<{width}}  {'roughness':>10}"
    if series.trend is not None:
        header += f"  {'RMSE vs trend':>13}"
    print(header)
    for label, filtered in outputs.items():
        row = f"{label:<{width}}  {np.mean(np.abs(np.diff(filtered))):10.3f}"
        if series.trend is not None:
            row += f"  {math.sqrt(np.mean((filtered - series.trend) ** 2)):13.3f}"
        print(row)
    print("roughness: mean |change| between consecutive outputs, in volume units per sample")
