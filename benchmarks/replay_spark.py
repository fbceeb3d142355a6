"""Replay a real-Spark run's samples through today's Scaler: what would it have decided?

    .venv/bin/python -m benchmarks.replay_spark out/spark_e2e --from 185 --to 190
    .venv/bin/python -m benchmarks.replay_spark out/spark_e2e --changed

``benchmarks.spark_e2e`` writes every sample the listener fed steadyscale, with the decision
after it, to ``DIR/decisions-steadyscale.jsonl``. This feeds the same samples (volume, backlog,
running, processed, at their times) to a Scaler built as that run's was (``autoscale`` on the
default spec: ``--capacity``, 1 to ``--executors``, no executor restart planned:
``scaling.spark.attach.EXECUTOR_RESTART``; ``--initial`` running before the first) and prints
each decision beside the recorded one. Open loop: the running counts are the run's own, so
after the first decision that differs, the samples answer the run's decisions, not the
replayed ones; it says what the code decides on those inputs, not what the run would have been.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scaling import Scaler
from scaling.spark.attach import EXECUTOR_RESTART


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("run", type=Path, help="a benchmarks.spark_e2e --out folder")
    parser.add_argument("--capacity", type=float, default=100.0, help="rows/s per executor")
    parser.add_argument("--executors", type=int, default=6, help="the most executors")
    parser.add_argument("--initial", type=int, default=3, help="executors before the first")
    parser.add_argument("--from", dest="start", type=float, default=-float("inf"))
    parser.add_argument("--to", dest="end", type=float, default=float("inf"))
    parser.add_argument("--changed", action="store_true", help="only decisions that differ")
    args = parser.parse_args(argv)
    policy = {
        "capacity": args.capacity,
        "min_operators": 1,
        "max_operators": args.executors,
        "restart": EXECUTOR_RESTART,
    }
    scaler = Scaler.from_spec({"policy": policy}, operators=args.initial)
    path = args.run / "decisions-steadyscale.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    differ = 0
    for line in lines:
        sample = json.loads(line)
        processed = sample["processed"]
        decision = scaler.observe(
            float(sample["volume"]),
            float(sample["t"]),
            backlog=float(sample["backlog"]),
            running=int(sample["running"]),
            processed=None if processed is None else float(processed),
        )
        changed = (decision.operators, decision.code) != (sample["operators"], sample["code"])
        differ += changed
        if args.start <= sample["t"] <= args.end and (changed or not args.changed):
            print(
                f"t={sample['t']:7.1f} volume {sample['volume']:6.0f} backlog "
                f"{sample['backlog']:7.0f} running "
                f"{sample['running']}: recorded {sample['operators']} {sample['code']}, "
                f"replayed {decision.operators} {decision.code}: {decision.reason}"
            )
    print(f"{differ} of {len(lines)} decisions differ from the recorded ones ({path})")


if __name__ == "__main__":
    main()
