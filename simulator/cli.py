"""The ``steadyscale`` command line.

``steadyscale denoise`` runs denoisers over a volume series (a CSV file, or a seeded demo) and
writes the filtered series, a plot and a summary. Every command is a subparser created in
``_parser`` with a ``run`` function that returns the exit status.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from filters import make_filter
from filters.noise import NoiseEstimator

DEMO_LENGTH = 1500
# Default tvd weight in units of the noise deviation σ. A flat stretch stays flat while the
# noise's running sum stays within ±lam, i.e. for about (lam / σ)² = 100 samples. On the demo
# (σ = 25, 50, 100; 20 seeds) 10σ beats moving_average w=60 on RMSE, roughness, scaling
# operations and mis-provisioned time alike; 20σ scales less but lags steps more.
LAM_PER_SIGMA = 10


@dataclass(frozen=True)
class Series:
    """A volume series: timestamps as written and parsed (float or datetime64), samples, trend."""

    label: str
    timestamps: list[str]
    times: np.ndarray
    values: np.ndarray
    trend: np.ndarray | None = None


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``steadyscale`` with the arguments ``argv`` (default: ``sys.argv[1:]``).

    Returns the exit status: 0 on success, 2 when an input or a filter spec is invalid (the
    message goes to stderr, without a traceback).
    """
    args = _parser().parse_args(argv)
    try:
        return int(args.run(args))
    except (OSError, ValueError) as error:
        print(f"steadyscale {args.command}: error: {error}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="steadyscale", description="Denoise stream input volume before threshold scaling."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    denoise = commands.add_parser(
        "denoise",
        help="run filters over a volume series and write the results",
        description=(
            "Run filters over a volume series (a CSV file with the columns timestamp,value, or a "
            "seeded demo) and write DIR/filtered.csv, DIR/denoise.png and a summary."
        ),
    )
    denoise.add_argument("--input", metavar="PATH", help="CSV with header timestamp,value")
    denoise.add_argument(
        "--filter",
        action="append",
        metavar="SPEC",
        help=(
            "repeatable: NAME, NAME:KEY=VALUE,KEY=VALUE or a JSON object; default: raw, "
            f"moving_average w=60, ewma alpha=0.05, tvd lam={LAM_PER_SIGMA}x the estimated "
            "noise deviation, ekf"
        ),
    )
    denoise.add_argument("--out", default="out/denoise", metavar="DIR", help="default: %(default)s")
    denoise.add_argument(
        "--noise-std", type=float, default=50.0, help="demo only: noise deviation (%(default)s)"
    )
    denoise.add_argument("--seed", type=int, default=1, help="demo only: seed (%(default)s)")
    denoise.set_defaults(run=_denoise)
    return parser


def _denoise(args: argparse.Namespace) -> int:
    series = _read_csv(Path(args.input)) if args.input else _demo(args.noise_std, args.seed)
    specs = args.filter or _default_specs(series.values)
    # Build every filter before running any, so that a bad spec fails fast.
    denoisers = {text: make_filter(_parse_spec(text)) for text in specs}
    outputs: dict[str, np.ndarray] = {}
    for text, denoiser in denoisers.items():
        print(f"{text} ...", end="", file=sys.stderr, flush=True)
        start = time.perf_counter()
        outputs[text] = denoiser.filter(series.values)
        print(f" {time.perf_counter() - start:.2f} s", file=sys.stderr)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    _write_csv(out / "filtered.csv", series, outputs)
    _plot(out / "denoise.png", series, outputs)
    _print_summary(series, outputs)
    print(f"wrote {out / 'filtered.csv'}")
    print(f"wrote {out / 'denoise.png'}")
    return 0


def _parse_spec(text: str) -> dict[str, Any]:
    """``name``, ``name:key=value,...`` (values int, float or str) or a JSON object."""
    if text.lstrip().startswith("{"):
        try:
            spec: dict[str, Any] = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"filter spec {text!r} is not valid JSON: {error}") from None
        return spec
    name, _, options = text.partition(":")
    spec = {"name": name}
    for option in options.split(",") if options else []:
        key, equals, value = option.partition("=")
        if not equals or not key.strip():
            raise ValueError(f"filter spec {text!r}: {option!r} is not of the form key=value")
        spec[key.strip()] = _parse_value(value.strip())
    return spec


def _parse_value(text: str) -> int | float | str:
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def _default_specs(values: np.ndarray) -> list[str]:
    # lam scales with the noise, so the default suits the demo and any trace's units alike. The
    # median of the running estimates describes the whole series, not only its last window.
    estimator = NoiseEstimator()
    estimates = [sigma for sigma in map(estimator.update, values.tolist()) if sigma is not None]
    noise = statistics.median(estimates) if estimates else 0.0
    lam = float(f"{LAM_PER_SIGMA * noise:.2g}")  # two significant digits read better
    return ["raw", "moving_average:w=60", "ewma:alpha=0.05", f"tvd:lam={lam:g}", "ekf"]


def _demo(noise_std: float, seed: int) -> Series:
    """Six flat segments between 200 and 500 tuples/s, at least 50 apart, plus Gaussian noise."""
    if not (math.isfinite(noise_std) and noise_std >= 0):
        raise ValueError(f"--noise-std={noise_std!r} is not allowed: it must be a number >= 0")
    rng = np.random.default_rng(seed)
    levels: list[float] = []
    while len(levels) < 6:
        level = round(rng.uniform(200.0, 500.0))
        if not levels or abs(level - levels[-1]) >= 50:
            levels.append(level)
    cuts = np.linspace(0, DEMO_LENGTH, len(levels) + 1).round().astype(int)
    cuts[1:-1] += rng.integers(-80, 81, size=len(levels) - 1)
    trend = np.repeat(levels, np.diff(cuts)).astype(float)
    # Volumes cannot be negative; clipping matters only when the noise is large.
    values = np.clip(trend + rng.normal(0.0, noise_std, DEMO_LENGTH), 0.0, None)
    seconds = np.arange(DEMO_LENGTH)
    label = f"demo: piecewise-constant trend + Gaussian noise, std {noise_std:g}, seed {seed}"
    return Series(label, [str(s) for s in seconds.tolist()], seconds.astype(float), values, trend)


def _read_csv(path: Path) -> Series:
    with path.open(newline="") as file:
        reader = csv.DictReader(file)
        if reader.fieldnames is None or not {"timestamp", "value"} <= set(reader.fieldnames):
            raise ValueError(
                f"{path}: the header must name timestamp and value, not {reader.fieldnames}"
            )
        rows = [(row["timestamp"], row["value"]) for row in reader]
    if len(rows) < 2:
        raise ValueError(f"{path}: {len(rows)} samples; at least 2 are needed")
    values = []
    for line, (_, value) in enumerate(rows, start=2):
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if not math.isfinite(number):
            raise ValueError(f"{path}, line {line}: value={value!r} is not a finite number")
        values.append(number)
    timestamps = [stamp for stamp, _ in rows]
    times = _parse_times(path, timestamps)
    backwards = np.flatnonzero(times[1:] < times[:-1])
    if backwards.size:
        line = int(backwards[0]) + 3
        raise ValueError(f"{path}, line {line}: timestamp goes back in time; sort the file")
    return Series(str(path), timestamps, times, np.array(values))


def _parse_times(path: Path, timestamps: list[str]) -> np.ndarray:
    """Numbers if every timestamp is one, else ISO datetimes."""
    try:
        return np.array([float(stamp) for stamp in timestamps])
    except ValueError:
        pass
    times = []
    for line, stamp in enumerate(timestamps, start=2):
        try:
            moment = datetime.fromisoformat(stamp)
        except ValueError:
            raise ValueError(
                f"{path}, line {line}: timestamp={stamp!r} is neither a number nor an ISO datetime"
            ) from None
        # datetime64 has no time zones: express offsets in UTC, which keeps the order.
        if moment.tzinfo is not None:
            moment = moment.astimezone(UTC).replace(tzinfo=None)
        times.append(moment)
    return np.array(times, dtype="datetime64[us]")


def _write_csv(path: Path, series: Series, outputs: dict[str, np.ndarray]) -> None:
    with path.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["timestamp", "value", *outputs])
        columns = [series.values.tolist(), *(filtered.tolist() for filtered in outputs.values())]
        for stamp, *numbers in zip(series.timestamps, *columns, strict=True):
            writer.writerow([stamp, *numbers])


def _plot(path: Path, series: Series, outputs: dict[str, np.ndarray]) -> None:
    # Imported here: matplotlib is slow to import and only this command draws. A bare Figure
    # renders with Agg and leaves pyplot's global state alone.
    from matplotlib.figure import Figure

    figure = Figure(figsize=(12, 5), layout="constrained")
    axes = figure.subplots()
    axes.plot(series.times, series.values, ".", color="0.7", markersize=2, label="samples")
    if series.trend is not None:
        axes.plot(series.times, series.trend, "k--", linewidth=1, label="trend")
    for text, filtered in outputs.items():
        # A line through every sample (raw) would hide the points and the other lines.
        if not np.array_equal(filtered, series.values):
            axes.plot(series.times, filtered, linewidth=1.2, label=text)
    axes.set(title=series.label, xlabel="timestamp", ylabel="volume")
    axes.legend(loc="upper left", fontsize="small")
    figure.savefig(path, dpi=120)


def _print_summary(series: Series, outputs: dict[str, np.ndarray]) -> None:
    width = max(len("filter"), *map(len, outputs))
    header = f"{'filter':<{width}}  {'roughness':>10}"
    if series.trend is not None:
        header += f"  {'RMSE vs trend':>13}"
    print(header)
    for text, filtered in outputs.items():
        row = f"{text:<{width}}  {np.mean(np.abs(np.diff(filtered))):10.3f}"
        if series.trend is not None:
            row += f"  {math.sqrt(np.mean((filtered - series.trend) ** 2)):13.3f}"
        print(row)
    print("roughness: mean |change| between consecutive outputs, in volume units per sample")
