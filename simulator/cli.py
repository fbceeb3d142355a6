"""The ``steadyscale`` command line.

* ``steadyscale serve`` runs the decision service (``service.app``) under uvicorn.
* ``steadyscale denoise`` runs denoisers over a volume series (a CSV file, or the paper workload
  with noise) and writes the filtered series, a plot and a summary.
* ``steadyscale simulate`` scales one workload (or trace) at one noise level with one or more
  filters and writes the timeline, the scaling metrics of each filter and a plot.
* ``steadyscale paper`` runs the paper's experiment over many seeds, and the parameter sweep
  beyond it, on Spark, and writes tables (markdown, CSV) and figures (``simulator.paper``).
* ``steadyscale sweep`` runs any grid of workloads × SNRs × filters × guards × seeds on Spark,
  resumably, and aggregates it there (``simulator.sweep``).
* ``steadyscale compare`` runs steadyscale and the seed systems' policies (HPA, DS2, Dhalion,
  Varga, seed-000 rules, StreamCloud, ELYSIUM) on the queue model over workloads, noise levels
  and seeds, on Spark (``simulator.compare``).
* ``steadyscale trace`` turns event records into a volume trace with a Spark job
  (``simulator.events``); ``steadyscale events`` writes a synthetic event log to try it on.

``paper``, ``sweep``, ``compare`` and ``trace`` take ``--master`` (any Spark master URL,
``local[*]`` by default) and need Java 17 or newer and the ``[spark]`` extra; what they need is
checked before Spark starts (``simulator.spark_checks``) and refused in one line. Spark logs only
errors unless ``--verbose``. A command whose optional dependency is missing names the extra
that installs it (``EXTRAS``); modules behind extras are imported inside the commands.

Every command is a subparser added by an ``_add_<command>`` function, with a ``run`` function
that returns the exit status.

Progress, on stderr: ``sweep`` and ``compare`` a bar over the cells when stderr is a terminal
(tqdm's own rule), a line per batch otherwise; ``paper`` its own bars; ``simulate`` a bar per
filter on a terminal and nothing otherwise, so that logs and pipes stay clean.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from filters import make_filter
from scaling import Scaler, ThresholdPolicy, default_spec, make_guard
from simulator.compare import SEED_002_WORKLOADS, baselines, compare_cells, run_compare
from simulator.engine import SimulationResult, simulate
from simulator.experiment import Cell, noise_seed
from simulator.noise import DEFINITIONS, add_noise, noise_std
from simulator.queue import QueueConfig
from simulator.spark_checks import VERBOSE_ENV, SparkUnavailable, check_spark
from simulator.sweep import claim_folder, expand_guard_sets, expand_spec, grid_cells, run_sweep
from simulator.workloads import (
    WORKLOADS,
    TraceReplay,
    make_workload,
    paper_workload,
    read_trace,
    recording_spacing,
    replay_trace,
    trace_start,
)

DEFAULT_DURATION = 1500.0
EXTRAS = {
    "pyspark": "spark",
    "py4j": "spark",
    "pyarrow": "spark",
    "matplotlib": "plots",
    "tqdm": "plots",
    "fastapi": "service",
    "uvicorn": "service",
    "pydantic": "service",
    "pydantic_settings": "service",
    "prometheus_client": "service",
    "grpc": "service",
    "google": "service",
    "psycopg": "service",
    "psycopg_pool": "service",
}
"""Optional dependencies by top-level module, and the extra of pyproject.toml that installs it."""
# The filters both commands run by default: the paper's rule (simulator.paper), plus ewma for
# denoise. tvd and ekf estimate the noise online, so they suit any workload's or trace's units.
DEFAULT_FILTERS = ["raw", "moving_average:w=60", "tvd", "ekf"]
SNR_FORMULAS = {
    "power": "mean(trend²) / σ²",
    "ac-power": "var(trend) / σ²",
    "amplitude": "mean(trend) / σ",
}
SUMMARY_COLUMNS = [
    "s_up",
    "s_down",
    "p_over",
    "p_under",
    "p_over_trend",
    "p_under_trend",
    "operator_seconds",
]


@dataclass(frozen=True)
class Series:
    """A volume series: timestamps as written, seconds since the first, samples, trend."""

    label: str
    timestamps: list[str]
    seconds: np.ndarray
    values: np.ndarray
    trend: np.ndarray | None = None
    dates: np.ndarray | None = None


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``steadyscale`` with the arguments ``argv`` (default: ``sys.argv[1:]``).

    Returns the exit status: 0 on success, 2 when an input or a spec is invalid (the message
    goes to stderr, without a traceback). Malformed options exit 2 through argparse.
    """
    args = _parser().parse_args(argv)
    if getattr(args, "verbose", False):
        os.environ[VERBOSE_ENV] = "1"
    try:
        return int(args.run(args))
    except (OSError, ValueError, SparkUnavailable) as error:
        print(f"steadyscale {args.command}: error: {error}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:
        extra = EXTRAS.get((error.name or "").partition(".")[0])
        if extra is None:
            raise
        print(f"steadyscale {args.command}: error: {error.name} is not installed; "
              f"pip install 'steadyscale[{extra}]'", file=sys.stderr)  # fmt: skip
        return 2
    except Exception as error:
        # Spark's own errors (a Spark SQL analysis error, a failed job) arrive as PySpark or
        # py4j exceptions with a page of Java trace in them: their first line says what failed.
        if not type(error).__module__.startswith(("pyspark", "py4j")):
            raise
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        print(f"steadyscale {args.command}: Spark failed: {first} (--verbose shows Spark's log)",
              file=sys.stderr)  # fmt: skip
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="steadyscale", description="Denoise stream input volume before threshold scaling."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_serve(commands)
    _add_denoise(commands)
    _add_simulate(commands)
    _add_paper(commands)
    _add_sweep(commands)
    _add_compare(commands)
    _add_trace(commands)
    _add_events(commands)
    return parser


def _add_filter_option(command: argparse.ArgumentParser, defaults: str) -> None:
    command.add_argument(
        "--filter",
        action="append",
        metavar="SPEC",
        help=f"repeatable: NAME, NAME:KEY=VALUE,KEY=VALUE or a JSON object; default: {defaults}",
    )


# --- serve ---------------------------------------------------------------------------------


def _add_serve(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser(
        "serve",
        help="run the decision service (HTTP API, SQLite file in --data-dir)",
        description=(
            "Run the decision service: POST volume samples per stream, get scaling decisions. "
            "Settings come from STEADYSCALE_* environment variables (see service/settings.py); "
            "the options below override them."
        ),
    )
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default 8000)")
    serve.add_argument("--data-dir", metavar="DIR", help="where the SQLite file lives (data)")
    serve.add_argument(
        "--database-url",
        metavar="URL",
        help="postgresql://user:password@host:port/db: keep the streams in PostgreSQL, shared "
        "by several replicas, instead of the SQLite file",
    )
    serve.add_argument(
        "--grpc-port", type=int, metavar="N", help="also serve KEDA's external scaler on port N"
    )
    serve.add_argument("--log-level", default="info", help="uvicorn's log level (%(default)s)")
    serve.set_defaults(run=_serve)


def _serve(args: argparse.Namespace) -> int:
    from service.app import create_app
    from service.server import serve
    from service.settings import Settings

    given = {
        "host": args.host,
        "port": args.port,
        "data_dir": args.data_dir,
        "database_url": args.database_url,
        "grpc_port": args.grpc_port,
    }
    settings = Settings(**{key: value for key, value in given.items() if value is not None})
    serve(create_app(settings), settings, log_level=args.log_level)
    return 0


# --- paper ---------------------------------------------------------------------------------


def _add_paper(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    paper = commands.add_parser(
        "paper",
        help="reproduce the paper's tables and figures, then sweep beyond them",
        description=(
            "Run raw, moving average, TVD and EKF on the paper's workload at SNR 0.5, 0.8, 1, 5 "
            "and 10 under both SNR definitions, over many seeds; then each filter's parameter "
            "grid with guards (Pareto fronts, cost ranking). Writes DIR/paper.md, DIR/paper.csv, "
            "DIR/sweep.csv, per-run CSVs and PNG figures."
        ),
    )
    paper.add_argument("--seeds", type=int, default=30, help="seeds per cell (%(default)s)")
    paper.add_argument(
        "--sweep-seeds",
        type=int,
        default=10,
        help="seeds per cell of the sweep, 0 to skip it (%(default)s)",
    )
    paper.add_argument(
        "--definition",
        action="append",
        choices=DEFINITIONS,
        help="SNR definition, repeatable (default: power and amplitude)",
    )
    paper.add_argument("--out", default="out/paper", metavar="DIR", help="default: %(default)s")
    _add_master_option(paper)
    paper.set_defaults(run=_paper)


def _paper(args: argparse.Namespace) -> int:
    if args.seeds < 2 or args.sweep_seeds < 0 or args.sweep_seeds == 1:
        raise ValueError(
            f"--seeds={args.seeds} and --sweep-seeds={args.sweep_seeds}: confidence intervals "
            "need at least 2 seeds (--sweep-seeds 0 skips the sweep)"
        )
    command = f"steadyscale paper --seeds {args.seeds} --sweep-seeds {args.sweep_seeds}"
    command += "".join(f" --definition {d}" for d in args.definition or ())
    check_spark(args.master)
    from simulator.paper import DEFINITIONS as PAPER_DEFINITIONS
    from simulator.paper import run_paper
    from simulator.spark import collect_rows, run_cells_spark

    spark = spark_session(args.master)

    def runner(cells: Sequence[Cell]) -> list[dict[str, Any]]:
        results = run_cells_spark(spark, cells)
        rows = collect_rows(results)
        results.unpersist()
        return rows

    paths = run_paper(
        Path(args.out),
        seeds=range(1, args.seeds + 1),
        sweep_seeds=range(1, args.sweep_seeds + 1),
        definitions=args.definition or PAPER_DEFINITIONS,
        runner=runner,
        command=command,
    )
    for path in paths.values():
        print(f"wrote {path}")
    return 0


def _add_master_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--master",
        default="local[*]",
        metavar="URL",
        help="Spark master URL: local[*] (default), local[N], local-cluster[N,cores,MB], "
        "spark://host:port, k8s://..., yarn",
    )
    command.add_argument(
        "--verbose",
        action="store_true",
        help="Spark's own log (WARN and up) and progress bars; by default only errors show",
    )


def spark_session(master: str) -> Any:
    """``simulator.spark.spark_session``, imported on first use: PySpark is an optional extra."""
    from simulator.spark import spark_session as start

    return start(master)


# --- sweep ---------------------------------------------------------------------------------


def _add_sweep(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sweep = commands.add_parser(
        "sweep",
        help="run a grid of simulations on Spark: workloads x SNRs x filters x guards x seeds",
        description=(
            "Run every combination of workloads, SNRs, SNR definitions, filter settings, guard "
            "sets and seeds as Spark jobs, then aggregate in Spark. Filter and guard specs take "
            "grids: tvd:lam_per_sigma=5|10|20 is three settings; a guard set joins guards with + "
            "(hysteresis:band=0.01+cooldown:down=60), none is no guard. Writes DIR/sweep.csv "
            "(one row per cell), DIR/cells.parquet, DIR/summary.csv, DIR/pareto.csv, "
            "DIR/sweep.md and Pareto plots. A rerun into the same DIR skips the cells done."
        ),
    )
    sweep.add_argument("--workloads", default="paper", help="comma-separated (%(default)s)")
    sweep.add_argument("--snr", default="0.5,0.8,1,5,10", help="comma-separated SNRs (%(default)s)")
    sweep.add_argument(
        "--definition", default="power", help="comma-separated SNR definitions (%(default)s)"
    )
    sweep.add_argument(
        "--filters",
        nargs="+",
        default=["raw", "moving_average:w=60", "tvd", "ekf"],
        metavar="SPEC",
        help="filter specs with grids (default: the paper's four)",
    )
    sweep.add_argument(
        "--guards", nargs="+", default=["none"], metavar="SET", help="guard sets (none)"
    )
    sweep.add_argument("--seeds", type=int, default=10, help="seeds 1..N per cell (%(default)s)")
    sweep.add_argument("--duration", type=float, default=DEFAULT_DURATION, help="s (1500)")
    sweep.add_argument("--capacity", type=float, default=50.0, help="tuples/s per operator (50)")
    sweep.add_argument("--out", default="out/sweep", metavar="DIR", help="default: %(default)s")
    sweep.add_argument(
        "--force",
        action="store_true",
        help="DIR holds another grid's results: delete them and start again (default: refuse)",
    )
    _add_master_option(sweep)
    sweep.set_defaults(run=_sweep)


def _sweep(args: argparse.Namespace) -> int:
    if args.seeds < 1:
        raise ValueError(f"--seeds={args.seeds} is not allowed: it must be an integer >= 1")
    snrs = _parse_snrs(args.snr)
    definitions = _split(args.definition)
    for definition in definitions:
        if definition not in DEFINITIONS:
            raise ValueError(
                f"--definition {definition!r} is not allowed: use {', '.join(DEFINITIONS)}"
            )
    workloads = _parse_workloads(args.workloads)
    filters = [spec for text in args.filters for spec in expand_spec(text)]
    guard_sets = [guards for text in args.guards for guards in expand_guard_sets(text)]
    # Build one of each before starting Spark, so that a bad spec fails in a second.
    for spec in filters:
        make_filter(spec)
    for guards in guard_sets:
        for guard in guards:
            make_guard(guard)
    check_spark(args.master)
    cells = grid_cells(
        workloads=workloads,
        snrs=snrs,
        definitions=definitions,
        filters=filters,
        guard_sets=guard_sets,
        seeds=range(1, args.seeds + 1),
        duration=args.duration,
        capacity=args.capacity,
    )
    claim_folder(Path(args.out), cells, force=args.force)
    run_sweep(cells, Path(args.out), spark_session(args.master))
    print(f"wrote {Path(args.out) / 'sweep.csv'} ({len(cells)} cells), summary.csv, pareto.csv, "
          "sweep.md and Pareto plots")  # fmt: skip
    return 0


# --- compare -------------------------------------------------------------------------------


def _add_compare(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    compare = commands.add_parser(
        "compare",
        help="steadyscale against HPA, DS2, Dhalion, Varga, rules, StreamCloud, ELYSIUM",
        description=(
            "Run steadyscale's configurations and the baseline policies on the queue model "
            "(capacity 50 tuples/s per instance, a pause after each scaling operation, backlog) "
            "for every workload, trace, SNR and seed, on Spark. Writes DIR/compare.csv (one row "
            "per run), DIR/summary.csv, DIR/compare.md and plots. A rerun into the same DIR "
            "skips the runs done."
        ),
    )
    compare.add_argument("--workloads", default="paper," + ",".join(SEED_002_WORKLOADS),
                         help="comma-separated (%(default)s)")  # fmt: skip
    compare.add_argument("--traces", nargs="*", default=[], metavar="CSV",
                         help="timestamp,value traces replayed at one sample per second, "
                         "scaled to 200-500 tuples/s")  # fmt: skip
    compare.add_argument("--trace-duration", type=float, default=None,
                         help="seconds of each trace (default: all of it)")  # fmt: skip
    compare.add_argument("--snr", default="1,5,10", help="comma-separated SNRs (%(default)s)")
    compare.add_argument("--definition", default="power", choices=sorted(DEFINITIONS))
    compare.add_argument("--seeds", type=int, default=5, help="seeds 1..N (%(default)s)")
    compare.add_argument(
        "--pause",
        type=float,
        default=QueueConfig.pause,
        help="seconds without processing after an operation (%(default)s)",
    )
    compare.add_argument(
        "--delay",
        type=float,
        default=QueueConfig.delay,
        help="seconds from a decision to its effect (%(default)s)",
    )
    compare.add_argument(
        "--policies",
        default="all",
        help="comma-separated labels (simulator.compare.baselines) or all",
    )
    compare.add_argument("--out", default="out/compare", metavar="DIR", help="(%(default)s)")
    _add_master_option(compare)
    compare.set_defaults(run=_compare)


def _compare(args: argparse.Namespace) -> int:
    if args.seeds < 2:
        raise ValueError(f"--seeds={args.seeds} is not allowed: intervals need at least 2 seeds")
    snrs = _parse_snrs(args.snr)
    workloads = _parse_workloads(args.workloads, " (and --traces for recorded traces)")
    policies = baselines()
    if args.policies != "all":
        wanted = _split(args.policies)
        unknown = [label for label in wanted if label not in policies]
        if unknown:
            raise ValueError(f"--policies {unknown} not allowed: choose from {list(policies)}")
        policies = {label: policies[label] for label in wanted}
    traces = [Path(path) for path in args.traces]
    for path in traces:
        read_trace(path)  # a missing or malformed trace fails now, not on a Spark worker
    cells = compare_cells(
        workloads, snrs, range(1, args.seeds + 1), policies, traces, args.definition,
        trace_duration=args.trace_duration, pause=args.pause, delay=args.delay,
    )  # fmt: skip
    out = Path(args.out)
    run_compare(cells, out, spark_session(args.master))
    print(f"wrote {out / 'compare.csv'} ({len(cells)} runs), summary.csv, compare.md and plots")
    return 0


def _parse_snrs(text: str) -> list[float]:
    snrs = [_parse_number("--snr", part) for part in _split(text)]
    for snr in snrs:
        if not snr > 0:
            raise ValueError(f"--snr {snr:g} is not allowed: an SNR must be > 0 (inf: no noise)")
    return snrs


def _parse_workloads(text: str, hint: str = "") -> list[str]:
    workloads = _split(text)
    for workload in workloads:
        if workload not in WORKLOADS or workload == "trace":
            raise ValueError(
                f"--workloads {workload!r} is not allowed: use "
                + ", ".join(name for name in sorted(WORKLOADS) if name != "trace")
                + hint
            )
    return workloads


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _parse_number(option: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{option} {text!r} is not a number") from None


# --- trace ---------------------------------------------------------------------------------


def _add_trace(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    trace = commands.add_parser(
        "trace",
        help="turn event records (CSV or Parquet, one row per event) into a volume trace",
        description=(
            "A Spark job: count the events per time bucket of --step seconds and write the "
            "timestamp,value CSV (events per second) that simulate --trace replays."
        ),
    )
    trace.add_argument("--input", required=True, metavar="PATH", help="file, directory or glob")
    trace.add_argument("--timestamp-column", required=True, metavar="NAME")
    trace.add_argument("--step", type=float, default=1.0, help="bucket seconds (%(default)s)")
    trace.add_argument("--format", choices=("csv", "parquet"), help="default: from the path")
    trace.add_argument(
        "--unit", choices=("s", "ms"), default="s", help="numeric timestamps: seconds or ms"
    )
    trace.add_argument("--out", required=True, metavar="FILE", help="the CSV to write")
    _add_master_option(trace)
    trace.set_defaults(run=_trace)


def _trace(args: argparse.Namespace) -> int:
    check_spark(args.master)
    from simulator.events import check_input, detect_format, events_to_volume, write_trace

    # A missing input or an unknown format fails here, in one line, before Spark starts.
    check_input(args.input)
    given_format = args.format or detect_format(args.input)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    spark = spark_session(args.master)
    volume = events_to_volume(
        spark,
        args.input,
        args.timestamp_column,
        step=args.step,
        input_format=given_format,
        unit=args.unit,
    )
    rows = write_trace(volume, args.out)
    print(f"wrote {args.out} ({rows} buckets of {args.step:g} s)")
    return 0


# --- events --------------------------------------------------------------------------------


def _add_events(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    events = commands.add_parser(
        "events",
        help="write a synthetic event log (one row per event) to try `steadyscale trace` on",
        description=(
            "Write an event log (columns ts, user; CSV or Parquet by the ending of --out) whose "
            "events per second follow a workload: Poisson arrivals at the workload's volume, "
            "in the steadyscale trace example of the README."
        ),
    )
    events.add_argument("--workload", default="paper", help="a workload name (%(default)s)")
    events.add_argument("--duration", type=float, default=600.0, help="s (%(default)s)")
    events.add_argument("--seed", type=int, default=1, help="(%(default)s)")
    events.add_argument("--start", default="2026-01-01T00:00:00",
                        help="time of the first second, UTC (%(default)s)")  # fmt: skip
    events.add_argument("--out", required=True, metavar="FILE", help=".csv or .parquet")
    events.set_defaults(run=_events)


def _events(args: argparse.Namespace) -> int:
    from datetime import datetime

    from simulator.events import detect_format, write_events

    detect_format(args.out)  # a wrong ending fails before the work
    if args.out.endswith(".parquet"):
        _require("pyarrow")
    rates = make_workload(_parse_workloads(args.workload)[0], args.seed, args.duration)
    try:
        start = datetime.fromisoformat(args.start)
    except ValueError:
        raise ValueError(f"--start {args.start!r} is not an ISO-8601 datetime") from None
    count = write_events(args.out, rates, start, seed=args.seed)
    print(f"wrote {args.out} ({count:,} events over {rates.size:g} s of workload "
          f"{args.workload}, from {start.isoformat(' ')})")  # fmt: skip
    return 0


# --- denoise -------------------------------------------------------------------------------


def _add_denoise(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    denoise = commands.add_parser(
        "denoise",
        help="run filters over a volume series and write the results",
        description=(
            "Run filters over a volume series (a CSV file with the columns timestamp,value, or "
            "the paper workload plus Gaussian noise) and write DIR/filtered.csv, "
            "DIR/denoise.png and a summary."
        ),
    )
    denoise.add_argument("--input", metavar="PATH", help="CSV with header timestamp,value")
    _add_filter_option(
        denoise,
        "raw, moving_average w=60, ewma alpha=0.05, tvd, ekf (tvd and ekf adapt to the noise)",
    )
    denoise.add_argument("--out", default="out/denoise", metavar="DIR", help="default: %(default)s")
    denoise.add_argument("--unit", default="tuples/s", help="the values' unit (%(default)s)")
    denoise.add_argument(
        "--noise-std", type=float, default=50.0, help="demo only: noise deviation (%(default)s)"
    )
    denoise.add_argument("--seed", type=int, default=1, help="demo only: seed (%(default)s)")
    denoise.set_defaults(run=_denoise)


def _denoise(args: argparse.Namespace) -> int:
    _require("matplotlib")
    series = _read_series(Path(args.input)) if args.input else _demo(args.noise_std, args.seed)
    specs = args.filter or [*DEFAULT_FILTERS[:2], "ewma:alpha=0.05", *DEFAULT_FILTERS[2:]]
    # Build every filter before running any, so that a bad spec fails fast.
    denoisers = {text: make_filter(_parse_spec(text)) for text in specs}
    outputs: dict[str, np.ndarray] = {}
    for text, denoiser in denoisers.items():
        print(f"{text} ...", end="", file=sys.stderr, flush=True)
        start = time.perf_counter()
        outputs[text] = denoiser.filter(series.values)
        print(f" {time.perf_counter() - start:.2f} s", file=sys.stderr)

    from simulator.plots import plot_filtered

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    _write_columns(
        out / "filtered.csv",
        {"timestamp": series.timestamps, "value": series.values.tolist()}
        | {text: filtered.tolist() for text, filtered in outputs.items()},
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
    _print_denoise_summary(series, outputs)
    print(f"wrote {out / 'filtered.csv'}")
    print(f"wrote {out / 'denoise.png'}")
    return 0


def _demo(noise_std: float, seed: int) -> Series:
    """The paper workload plus Gaussian noise of deviation ``noise_std``."""
    if not (math.isfinite(noise_std) and noise_std >= 0):
        raise ValueError(f"--noise-std={noise_std!r} is not allowed: it must be a number >= 0")
    trend = paper_workload(seed)
    # The amplitude ratio mean(trend) / σ is the one that fixes σ directly.
    snr = float(np.mean(trend)) / noise_std if noise_std > 0 else math.inf
    values = add_noise(trend, snr, noise_seed(seed), definition="amplitude")
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


def _print_denoise_summary(series: Series, outputs: dict[str, np.ndarray]) -> None:
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


# --- simulate ------------------------------------------------------------------------------


def _add_simulate(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    simulate_command = commands.add_parser(
        "simulate",
        help="scale one workload at one noise level with each filter and compare",
        description=(
            "Add noise to one workload (or replay a trace), scale it with each filter through "
            "the threshold policy and write DIR/timeline.csv, DIR/summary.csv (scaling "
            "operations and mis-provisioned seconds per filter) and DIR/simulate.png."
        ),
    )
    source = simulate_command.add_mutually_exclusive_group()
    source.add_argument(
        "--workload",
        metavar="NAME",
        help=f"one of {', '.join(sorted(WORKLOADS))} (default: paper)",
    )
    source.add_argument(
        "--trace",
        metavar="PATH",
        help="replay a CSV with header timestamp,value (see simulator.workloads.trace_workload)",
    )
    simulate_command.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="repeatable: a workload parameter; VALUE is JSON (200, 0.5, [250, 450], null) or text",
    )
    simulate_command.add_argument(
        "--duration",
        type=float,
        metavar="S",
        help=f"seconds (default: {DEFAULT_DURATION:g}, or the whole trace)",
    )
    simulate_command.add_argument(
        "--seed", type=int, default=1, help="seeds the workload and the noise (%(default)s)"
    )
    simulate_command.add_argument(
        "--snr", type=float, default=math.inf, help="signal-to-noise ratio (default: no noise)"
    )
    simulate_command.add_argument(
        "--definition",
        choices=DEFINITIONS,
        default="power",
        help="how --snr is defined (%(default)s): "
        + "; ".join(f"{name}: {formula}" for name, formula in SNR_FORMULAS.items()),
    )
    _add_filter_option(
        simulate_command,
        "default (steadyscale's recommended Scaler: changepoint + confidence), raw, "
        "moving_average w=60, tvd, ekf (tvd and ekf adapt to the noise they estimate)",
    )
    simulate_command.add_argument(
        "--guard",
        action="append",
        metavar="SPEC",
        help="repeatable, applied in order to every filter's scaler: NAME, NAME:KEY=VALUE,... or "
        "JSON (cooldown, hysteresis, max_step, stabilization)",
    )
    simulate_command.add_argument(
        "--capacity", type=float, default=50.0, help="UNIT per operator (%(default)s)"
    )
    simulate_command.add_argument(
        "--unit",
        default="tuples/s",
        help="the unit of the volume, for labels: a trace's own with --keep-values (%(default)s)",
    )
    simulate_command.add_argument(
        "--keep-values",
        action="store_true",
        help="replay the trace's recorded values (default: rescaled linearly to 200-500)",
    )
    simulate_command.add_argument(
        "--real-time",
        action="store_true",
        help="replay the trace at its recorded time, one sample per recorded spacing (default: "
        "one recorded sample per second)",
    )
    simulate_command.add_argument("--min-operators", type=int, default=1, help="(%(default)s)")
    simulate_command.add_argument("--max-operators", type=int, help="(default: no limit)")
    simulate_command.add_argument(
        "--operators",
        type=int,
        help="operators running at the start (default: those the first trend value needs)",
    )
    simulate_command.add_argument(
        "--out", default="out/simulate", metavar="DIR", help="default: %(default)s"
    )
    simulate_command.set_defaults(run=_simulate)


def _simulate(args: argparse.Namespace) -> int:
    _require("matplotlib", "tqdm")
    if args.seed < 0:
        raise ValueError(f"--seed={args.seed} is not allowed: it must be an integer >= 0")
    params = _workload_params(args.param or [], trace=args.trace is not None)
    replay: TraceReplay | None = None
    if args.trace is not None:
        replay = _replay(args, params)
        trend = replay.values
        source = f"trace {args.trace}"
    else:
        if args.keep_values or args.real_time:
            raise ValueError("--keep-values and --real-time apply to --trace only")
        name = args.workload or "paper"
        duration = DEFAULT_DURATION if args.duration is None else args.duration
        trend = make_workload(name, args.seed, duration, **params)
        source = f"workload {name}" + "".join(f", {k}={v!r}" for k, v in params.items())
    step = replay.step if replay is not None else float(params.get("step", 1.0))
    unit = args.unit
    seed_of_noise = noise_seed(args.seed)
    sigma = noise_std(trend, args.snr, args.definition)
    volumes = add_noise(trend, args.snr, seed_of_noise, args.definition)
    specs = args.filter or ["default", *DEFAULT_FILTERS]

    # Build everything before running anything, so that a bad spec fails fast.
    policy = ThresholdPolicy(args.capacity, args.min_operators, args.max_operators)
    guard_specs = [_parse_spec(text, "guard") for text in args.guard or []]
    initial = policy.needed(float(trend[0])) if args.operators is None else args.operators
    scalers = {text: _scaler(text, policy, guard_specs, initial) for text in specs}
    results = {text: _run(text, scaler, volumes, trend, step) for text, scaler in scalers.items()}

    from simulator.plots import plot_timeline

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    _write_timeline(out / "timeline.csv", trend, results)
    rows = {text: _summary_row(result) for text, result in results.items()}
    _write_columns(
        out / "summary.csv",
        {"filter": list(rows)} | {c: [row[c] for row in rows.values()] for c in SUMMARY_COLUMNS},
    )
    noise = (
        "no noise"
        if math.isinf(args.snr)
        else f"SNR {args.snr:g} ({args.definition}), σ = {sigma:.1f} {unit}"
    )
    compressed = ""
    if replay is not None:
        compressed = (
            ", replayed in real time"
            if replay.time_scale == 1.0
            else f", replayed {replay.time_scale:g}x faster"
        )
    plot_timeline(
        out / "simulate.png",
        results,
        title=f"{source}{compressed}, seed {args.seed}, {noise}, capacity {policy.capacity:g} "
        f"{unit} per operator",
        trend=trend,
        capacity=policy.capacity,
        dates=None if replay is None else replay.dates(),
        unit=unit,
    )

    print(f"{source}, seed {args.seed}: {trend.size} samples, one every {step:g} s")
    if replay is not None:
        print(f"trace: {replay.describe(unit)}")
    if math.isinf(args.snr):
        print("noise: none added")
    else:
        formula = SNR_FORMULAS[args.definition]
        print(
            f"noise: SNR {args.snr:g} by the {args.definition} definition ({formula}), "
            f"σ = {sigma:.1f} {unit}, Gaussian, seed {seed_of_noise}, clipped at 0"
        )
    if args.trace is not None:
        print("trend: the trace as replayed, its own noise included")
    most = "∞" if policy.max_operators is None else policy.max_operators
    bounds = f"{policy.min_operators}..{most}"
    guards = ", ".join(args.guard) if args.guard else "none"
    print(
        f"scaling: capacity {policy.capacity:g} {unit} per operator, needed = max("
        f"{policy.min_operators}, ceil(volume / {policy.capacity:g})) within {bounds}; "
        f"{initial} at the start; guards: {guards}"
    )
    _print_simulate_table(rows)
    for name in ("timeline.csv", "summary.csv", "simulate.png"):
        print(f"wrote {out / name}")
    return 0


def _scaler(
    text: str, policy: ThresholdPolicy, guards: Sequence[dict[str, Any]], operators: int
) -> Scaler:
    """The Scaler of one ``--filter``: ``default`` is steadyscale's (``scaling.default_spec``,
    its own guards first), anything else a filter spec with the ``--guard`` guards."""
    if text == "default":
        spec = default_spec(policy.capacity)
        filter_spec, guards = spec["filter"], [*spec["guards"], *guards]
    else:
        filter_spec = _parse_spec(text)
    return Scaler(make_filter(filter_spec), policy, [make_guard(g) for g in guards], operators)


TRACE_PARAMS = {"step", "low", "high", "column", "time_scale"}
"""The parameters of ``replay_trace`` that ``--param`` may set (``path``, ``duration``: options)."""


def _replay(args: argparse.Namespace, params: dict[str, Any]) -> TraceReplay:
    """The trace of ``--trace``, with ``--keep-values`` and ``--real-time`` applied."""
    given = {"low", "high"} & params.keys() if args.keep_values else set()
    given |= {"step", "time_scale"} & params.keys() if args.real_time else set()
    if given:
        raise ValueError(f"--param {sorted(given)} and --keep-values/--real-time contradict")
    if args.keep_values:
        params = params | {"low": None, "high": None}
    if args.real_time:
        params = params | {"step": recording_spacing(args.trace), "time_scale": 1.0}
    unknown = params.keys() - TRACE_PARAMS
    if unknown:
        raise ValueError(
            f"--param {sorted(unknown)} is not allowed with --trace: use {sorted(TRACE_PARAMS)}"
        )
    return replay_trace(args.trace, duration=args.duration, **params)


def _run(
    label: str, scaler: Scaler, volumes: np.ndarray, trend: np.ndarray, step: float
) -> SimulationResult:
    from tqdm import tqdm

    # disable=None: the bar shows only when stderr is a terminal.
    with tqdm(total=volumes.size, desc=label, unit="sample", file=sys.stderr, disable=None) as bar:
        progress = None if bar.disable else lambda done: bar.update(done - bar.n)
        return simulate(scaler, volumes, trend=trend, step=step, progress=progress)


def _write_timeline(path: Path, trend: np.ndarray, results: Mapping[str, SimulationResult]) -> None:
    """t, volume, trend, each run's filtered volume and operators, and the operators needed."""
    first = next(iter(results.values())).timeline
    columns = {name: first[name] for name in ("t", "volume")} | {"trend": trend}
    for text, result in results.items():
        columns[f"filtered[{text}]"] = result.timeline["filtered"]
        columns[f"operators[{text}]"] = result.timeline["operators"]
    columns |= {name: first[name] for name in ("needed", "needed_trend")}
    _write_columns(path, {name: values.tolist() for name, values in columns.items()})


def _summary_row(result: SimulationResult) -> dict[str, float]:
    assert result.trend_metrics is not None  # simulate was given the trend
    return result.metrics | {
        "p_over_trend": result.trend_metrics["p_over"],
        "p_under_trend": result.trend_metrics["p_under"],
    }


def _print_simulate_table(rows: Mapping[str, Mapping[str, float]]) -> None:
    headings = ["s+", "s-", "p+ (s)", "p- (s)", "p+ trend", "p- trend", "operator·s"]
    width = max(len("filter"), *map(len, rows))
    print(f"{'filter':<{width}}" + "".join(f"  {heading:>10}" for heading in headings))
    for text, row in rows.items():
        print(
            f"{text:<{width}}" + "".join(f"  {row[column]:>10.10g}" for column in SUMMARY_COLUMNS)
        )
    print("s+ / s-: scaling operations that add / remove operators")
    print(
        "p+ / p-: seconds with more / fewer operators running than the samples need "
        "(p± trend: than the trend needs)"
    )


def _workload_params(texts: Sequence[str], *, trace: bool) -> dict[str, Any]:
    """``KEY=VALUE`` texts as keyword arguments; VALUE is parsed as JSON, else kept as text."""
    reserved = {"seed": "--seed", "duration": "--duration"} | ({"path": "--trace"} if trace else {})
    params: dict[str, Any] = {}
    for text in texts:
        key, equals, value = text.partition("=")
        key = key.strip()
        if not equals or not key:
            raise ValueError(f"--param {text!r} is not of the form KEY=VALUE")
        if key in reserved:
            raise ValueError(f"--param {key}=... is not allowed: use {reserved[key]}")
        params[key] = _parse_value(value.strip())
    return params


# --- shared --------------------------------------------------------------------------------


def _require(*modules: str) -> None:
    """Fail before any work when an optional dependency is missing (``main`` names its extra)."""
    for module in modules:
        if importlib.util.find_spec(module) is None:
            raise ModuleNotFoundError(f"No module named {module!r}", name=module)


def _parse_spec(text: str, kind: str = "filter") -> dict[str, Any]:
    """``name``, ``name:key=value,...`` (values as in ``_parse_value``) or a JSON object."""
    if text.lstrip().startswith("{"):
        try:
            spec: dict[str, Any] = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"{kind} spec {text!r} is not valid JSON: {error}") from None
        return spec
    name, _, options = text.partition(":")
    spec = {"name": name}
    for option in options.split(",") if options else []:
        key, equals, value = option.partition("=")
        if not equals or not key.strip():
            raise ValueError(f"{kind} spec {text!r}: {option!r} is not of the form key=value")
        spec[key.strip()] = _parse_value(value.strip())
    return spec


def _parse_value(text: str) -> Any:
    """A JSON value (``60``, ``0.05``, ``[250, 450]``, ``null``), a number, else the text."""
    for convert in (json.loads, int, float):
        try:
            return convert(text)
        except ValueError:  # json.JSONDecodeError is one
            pass
    return text


def _write_columns(path: Path, columns: Mapping[str, Sequence[Any]]) -> None:
    """A CSV with a header of the column names and one row per index."""
    with path.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(columns)
        writer.writerows(zip(*columns.values(), strict=True))


if __name__ == "__main__":
    sys.exit(main())
