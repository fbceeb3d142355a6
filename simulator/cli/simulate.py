"""``steadyscale simulate``: one workload (or trace) at one noise level, scaled by each filter."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from scaling import Scaler, ThresholdPolicy
from simulator.cli import options
from simulator.cli.options import Commands, add_command, add_list
from simulator.experiments.cells import DEFAULT, build_scalers, noise_seed, noisy_trend
from simulator.experiments.specs import parse_guard_set
from simulator.model.catalog import WORKLOADS, make_workload
from simulator.model.engine import SimulationResult, simulate
from simulator.model.noise import DEFINITIONS, noise_std
from simulator.model.traces import TraceReplay, recording_spacing, replay_trace
from simulator.output.tables import write_columns

SUMMARY_COLUMNS = [
    "s_up",
    "s_down",
    "p_over",
    "p_under",
    "p_over_trend",
    "p_under_trend",
    "operator_seconds",
]
TRACE_PARAMS = {"step", "low", "high", "column", "time_scale"}
"""The parameters of ``replay_trace`` that ``--param`` may set (``path``, ``duration``: options)."""


def add(commands: Commands) -> None:
    command = add_command(
        commands,
        "simulate",
        run,
        help="scale one workload at one noise level with each filter and compare",
        description=(
            "Add noise to one workload (or replay a trace), scale it with each filter through "
            "the threshold policy and write DIR/timeline.csv, DIR/summary.csv (scaling "
            "operations and mis-provisioned seconds per filter) and DIR/simulate.png."
        ),
    )
    source = command.add_mutually_exclusive_group()
    source.add_argument(
        "--workload",
        metavar="NAME",
        help=f"one of {', '.join(sorted(WORKLOADS))} (default: paper)",
    )
    source.add_argument(
        "--trace",
        metavar="PATH",
        help="replay a CSV with header timestamp,value (simulator.model.traces.replay_trace)",
    )
    add_list(
        command,
        "--param",
        metavar="KEY=VALUE",
        help="workload parameters; VALUE is JSON (200, 0.5, [250, 450], null) or text",
    )
    command.add_argument(
        "--duration",
        type=float,
        metavar="S",
        help=f"seconds (default: {options.DEFAULT_DURATION:g}, or the whole trace)",
    )
    command.add_argument(
        "--seed", type=int, default=1, help="seeds the workload and the noise (%(default)s)"
    )
    command.add_argument(
        "--snr", type=float, default=math.inf, help="signal-to-noise ratio (default: no noise)"
    )
    command.add_argument(
        "--definition",
        choices=DEFINITIONS,
        default="power",
        help=f"(%(default)s) {options.definition_help()}",
    )
    add_list(
        command,
        "--filter",
        metavar="SPEC",
        help="filter specs, | for several settings, or default (steadyscale's recommended "
        "Scaler: changepoint + confidence); default: default "
        f"{' '.join(options.PAPER_RULE)} (tvd and ekf adapt to the noise they estimate)",
    )
    command.add_argument(
        "--guards",
        metavar="SET",
        help="one guard set applied to every filter's scaler, after default's own: none, "
        "guards joined by + (cooldown:down=60+hysteresis:band=0.02) or a JSON list (none)",
    )
    command.add_argument(
        "--capacity", type=float, default=50.0, help="UNIT per operator (%(default)s)"
    )
    command.add_argument(
        "--unit",
        default="tuples/s",
        help="the unit of the volume, for labels: a trace's own with --keep-values (%(default)s)",
    )
    command.add_argument(
        "--keep-values",
        action="store_true",
        help="replay the trace's recorded values (default: rescaled linearly to 200-500)",
    )
    command.add_argument(
        "--real-time",
        action="store_true",
        help="replay the trace at its recorded time, one sample per recorded spacing (default: "
        "one recorded sample per second)",
    )
    command.add_argument("--min-operators", type=int, default=1, help="(%(default)s)")
    command.add_argument("--max-operators", type=int, help="(default: no limit)")
    command.add_argument(
        "--operators",
        type=int,
        help="operators running at the start (default: those the first trend value needs)",
    )
    command.add_argument(
        "--out", default="out/simulate", metavar="DIR", help="default: %(default)s"
    )


def run(args: argparse.Namespace) -> int:
    options.require("matplotlib", "tqdm")
    if args.seed < 0:
        raise ValueError(f"--seed={args.seed} is not allowed: it must be an integer >= 0")
    reserved = {"seed": "--seed", "duration": "--duration"}
    if args.trace is not None:
        reserved["path"] = "--trace"
    params = options.key_values(args.param or [], "--param", reserved)
    replay: TraceReplay | None = None
    if args.trace is not None:
        replay = _replay(args, params)
        trend = replay.values
        source = f"trace {args.trace}"
    else:
        if args.keep_values or args.real_time:
            raise ValueError("--keep-values and --real-time apply to --trace only")
        name = args.workload or "paper"
        duration = options.DEFAULT_DURATION if args.duration is None else args.duration
        trend = make_workload(name, args.seed, duration, **params)
        source = f"workload {name}" + "".join(f", {k}={v!r}" for k, v in params.items())
    step = replay.step if replay is not None else float(params.get("step", 1.0))
    unit = args.unit
    sigma = noise_std(trend, args.snr, args.definition)
    volumes = noisy_trend(trend, args.seed, args.snr, args.definition)

    # Build everything before running anything, so that a bad spec fails fast.
    policy = ThresholdPolicy(args.capacity, args.min_operators, args.max_operators)
    guards = parse_guard_set(args.guards or "none")
    initial = policy.needed(float(trend[0])) if args.operators is None else args.operators
    texts = args.filter or [DEFAULT, *options.PAPER_RULE]
    settings = options.filter_settings(texts, keep=[DEFAULT])
    configs = {label: (spec, guards) for label, spec in settings.items()}
    scalers = build_scalers(configs, policy, initial)
    results = {
        label: _run(label, scaler, volumes, trend, step) for label, scaler in scalers.items()
    }

    from simulator.output.figures import plot_timeline

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    _write_timeline(out / "timeline.csv", trend, results)
    rows = {label: _summary_row(result) for label, result in results.items()}
    write_columns(
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
        formula = options.SNR_FORMULAS[args.definition]
        print(
            f"noise: SNR {args.snr:g} by the {args.definition} definition ({formula}), "
            f"σ = {sigma:.1f} {unit}, Gaussian, seed {noise_seed(args.seed)}, clipped at 0"
        )
    if args.trace is not None:
        print("trend: the trace as replayed, its own noise included")
    most = "∞" if policy.max_operators is None else policy.max_operators
    bounds = f"{policy.min_operators}..{most}"
    print(
        f"scaling: capacity {policy.capacity:g} {unit} per operator, needed = max("
        f"{policy.min_operators}, ceil(volume / {policy.capacity:g})) within {bounds}; "
        f"{initial} at the start; guards: {args.guards or 'none'}"
    )
    _print_table(rows)
    for name in ("timeline.csv", "summary.csv", "simulate.png"):
        print(f"wrote {out / name}")
    return 0


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
    for label, result in results.items():
        columns[f"filtered[{label}]"] = result.timeline["filtered"]
        columns[f"operators[{label}]"] = result.timeline["operators"]
    columns |= {name: first[name] for name in ("needed", "needed_trend")}
    write_columns(path, {name: values.tolist() for name, values in columns.items()})


def _summary_row(result: SimulationResult) -> dict[str, float]:
    assert result.trend_metrics is not None  # simulate was given the trend
    return result.metrics | {
        "p_over_trend": result.trend_metrics["p_over"],
        "p_under_trend": result.trend_metrics["p_under"],
    }


def _print_table(rows: Mapping[str, Mapping[str, float]]) -> None:
    headings = ["s+", "s-", "p+ (s)", "p- (s)", "p+ trend", "p- trend", "operator·s"]
    width = max(len("filter"), *map(len, rows))
    print(f"{'filter':<{width}}" + "".join(f"  {heading:>10}" for heading in headings))
    for label, row in rows.items():
        print(
            f"{label:<{width}}" + "".join(f"  {row[column]:>10.10g}" for column in SUMMARY_COLUMNS)
        )
    print("s+ / s-: scaling operations that add / remove operators")
    print(
        "p+ / p-: seconds with more / fewer operators running than the samples need "
        "(p± trend: than the trend needs)"
    )
