"""The default's decisions in one cell of ``steadyscale compare``, traced: why it did what it did.

    .venv/bin/python -m benchmarks.trace_decision --workload paper --snr 5 --seed 2 --pause 8
    .venv/bin/python -m benchmarks.trace_decision --workload paper --snr 5 --seed 2 --pause 8 \\
        --at 383,395
    .venv/bin/python -m benchmarks.trace_decision --workload trace:Twitter_volume_AAPL --snr 1 \\
        --seed 4 --pause 8 --delay 30

Runs the cell on the queue model (``simulator.experiments.compare.queue_run``, the compare
grid's settings; a recorded trace, ``trace:NAME``, is read from ``--traces`` whole, as
``benchmarks.regimes`` runs it) with the default, or the default with ``--set NAME=VALUE`` (as
``benchmarks.regimes``). Without ``--at`` it lists every decision that changed the count:
when, from and to, its reason code, the true level (the noise-free trend) against the level the
filter gave, and the late seconds (queueing delay over the latency) in the 40 s that follow.
With ``--at`` it prints the whole decision record (``Decision.explain``: the inputs, the
prices, the cost terms of the chosen count and its neighbours) of the decisions at those times;
with ``--curve`` as well, the cost terms of every count from 0 to twice the larger of the chosen
and the cheapest unbounded one, priced again from the record's inputs (rounded to 4 decimals
there, so a total may differ from the record's in its last digits): why not 10 instead of 15.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.compare_knobs import workload_of
from scaling.baselines.steadyscale import ScalerPolicy
from scaling.cost import Pricer, Prices
from scaling.decision import Decision
from scaling.outlook import Outlook
from simulator.experiments.compare import CompareCell, baselines, queue_run
from simulator.model.queue import QueueConfig

# Seconds after an operation over which its late seconds are counted.
AFTER_OPERATION = 40


class Traced(ScalerPolicy):
    """The default, keeping every decision it makes."""

    def __init__(self, **spec: Any) -> None:
        super().__init__(**spec)
        self.decisions: list[Decision] = []

    def decide(self, observation: Any) -> int:
        count = super().decide(observation)
        assert self.last is not None
        self.decisions.append(self.last)
        return count


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--workload", default="paper")
    parser.add_argument("--snr", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pause", type=float, default=8.0)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--at", default="", help="times, comma-separated: print those records")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--curve", action="store_true", help="with --at: every count's cost")
    parser.add_argument(
        "--traces", type=Path, default=Path("../shared/data/traces"),
        help="where a --workload trace:NAME is read from, NAME.csv, all of it (as compare runs it)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    settings = {k: json.loads(v) for k, _, v in (item.partition("=") for item in args.set)}
    spec = {**baselines()["steadyscale"], **settings}
    workload, params, duration = workload_of(args.workload, args.traces)
    cell = CompareCell(
        "steadyscale", spec, workload, args.seed, args.snr, workload_params=params,
        duration=duration, pause=args.pause, delay=args.delay,
    )  # fmt: skip
    policy = Traced(**{key: value for key, value in spec.items() if key != "name"})
    trend, result = queue_run(cell, policy)
    timeline, metrics = result.timeline, result.metrics
    print(
        f"{args.workload}, SNR {args.snr:g}, seed {args.seed}, pause {args.pause:g} s, delay "
        f"{args.delay:g} s: {metrics['sla_seconds']:.0f} SLA s, "
        f"{metrics['operator_seconds']:.0f} operator-s, {metrics['s_up']:.0f} up, "
        f"{metrics['s_down']:.0f} down"
    )
    late = timeline["latency"] > QueueConfig.sla  # as the run counts its SLA seconds
    if args.at:
        by_time = {round(decision.t): decision for decision in policy.decisions}
        for at in (float(item) for item in args.at.split(",")):
            decision = by_time.get(round(at))
            if decision is None:
                print(f"t={at:g}: no decision at that time")
                continue
            print(f"t={decision.t:g}: {decision.previous} -> {decision.operators} {decision.code}")
            print(f"    {decision.reason}")
            print(f"    {json.dumps(decision.explain, default=str)}")
            if args.curve:
                print("\n".join(curve(decision, float(spec["capacity"]))))
        return
    times = timeline["t"]
    for decision in policy.decisions:
        if decision.action == "none":
            continue
        index = int(np.searchsorted(times, decision.t))
        after = int(late[index : index + AFTER_OPERATION].sum())
        index = min(index, len(times) - 1)  # one at the run's end: the last second's level
        print(
            f"t={decision.t:6.0f} {decision.previous:>3} -> {decision.operators:<3} "
            f"{decision.code:<10} true level {trend[index]:6.0f}, filtered "
            f"{decision.filtered:6.0f}, late s in the next {AFTER_OPERATION}: {after}"
        )


def curve(decision: Decision, capacity: float) -> list[str]:
    """Every count's cost terms for a cost-model decision, priced again from its record."""
    record = decision.explain or {}
    if record.get("model") != "cost" or "candidates" not in record:
        return ["    (no cost curve: not a priced cost-model decision)"]
    given, stated = record["inputs"], record["prices"]
    outlook = Outlook(
        level=given["level"],
        level_error=given["level_error"],
        excess=given["excess"],
        slope=given["slope"],
        variance=given["noise_per_second"] ** 2,
        backlog=given["backlog"],
        running=given["running"],
        landing=given["landing"],
        restart=given["restart"],
        # Records from before these were inputs leave them out: the Outlook's defaults.
        wander=given.get("wander", 0.0),
        operation_late=given.get("operation_late"),
        restart_down=given.get("restart_down"),
        tenure=given.get("tenure"),
    )
    late = stated["late_price"] if stated["late_price"] is not None else 0.0
    prices = Prices(capacity, stated["latency"], stated["operator_price"], late,
                    stated["operation_price"])  # fmt: skip
    pricer = Pricer(outlook, prices)
    top = 2 * max(decision.operators, record["unbounded"], 1)
    lines = [f"    {'count':>5} {'operator cost':>13} {'late s':>8} {'total':>10}"]
    for count in range(top + 1):
        terms = pricer.terms(count)
        mark = " <- chosen" if count == decision.operators else ""
        lines.append(f"    {count:>5} {terms.operator_cost:13.0f} {terms.late_seconds:8.1f} "
                     f"{terms.total:10.0f}{mark}")  # fmt: skip
    return lines


if __name__ == "__main__":
    main()
