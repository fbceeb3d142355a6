"""A fingerprint of decisions with a backlog: the same on two versions means the cost model
decides alike.

    .venv/bin/python -m benchmarks.backlog_decisions
    git worktree add /tmp/base 0b29a1d
    .venv/bin/python -m benchmarks.backlog_decisions --base /tmp/base   # that version's packages

Scalers told the backlog, running count and processed rate of the fluid queue they drive
(``simulator.model.queue``) on the paper workload, seeds 1-3, SNR 1 and 5 (power), from 5
operators: the default spec in twelve regimes, restart (pause) 4, 8, 20 and 60 s × actuation
delay 0, 30 and 120 s; a bounded spec (``max_operators`` 9) and one deciding by
``late_probability`` in the regimes (8, 0) and (20, 30). It prints how many runs and decisions
and two SHA-256: of every decided count and reason code in order, and of every decision's
record (``explain``, its numbers rounded as stored) and prose. ``--base DIR`` imports
``filters``, ``scaling`` and ``simulator`` from another checkout.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from benchmarks.volume_decisions import from_checkout

DEFAULT: dict[str, Any] = {"policy": {"capacity": 50.0}}
REGIMES = [(pause, delay) for pause in (4.0, 8.0, 20.0, 60.0) for delay in (0.0, 30.0, 120.0)]
OTHERS: list[dict[str, Any]] = [
    {"policy": {"capacity": 50.0, "max_operators": 9}},
    {"policy": {"capacity": 50.0, "late_probability": 0.01}},
]
OTHER_REGIMES = [(8.0, 0.0), (20.0, 30.0)]


class Recorder:
    """A Scaler behind the queue model's policy interface, told what the job reports, keeping
    every decision."""

    name = "recorder"
    interval = 1.0

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.decisions: list[Any] = []
        self._scaler: Any = None

    def decide(self, observation: Any) -> int:
        from scaling import Scaler

        if self._scaler is None:
            self._scaler = Scaler.from_spec(self.spec, operators=observation.operators)
        decision = self._scaler.observe(
            observation.arrival_rate,
            observation.t,
            backlog=observation.backlog,
            running=observation.operators,
            processed=observation.processed_rate,
        )
        self.decisions.append(decision)
        return int(decision.operators)


def main() -> None:
    from_checkout(__doc__.split("\n", 1)[0])
    from simulator import add_noise, paper_workload
    from simulator.model.queue import QueueConfig, run_queue

    runs = [(DEFAULT, regime) for regime in REGIMES]
    runs += [(spec, regime) for spec in OTHERS for regime in OTHER_REGIMES]
    counts, records = hashlib.sha256(), hashlib.sha256()
    total = runs_done = 0
    for spec, (pause, delay) in runs:
        for seed in (1, 2, 3):
            for snr in (1.0, 5.0):
                recorder = Recorder(spec)
                volumes = add_noise(paper_workload(seed), snr, seed)
                run_queue(
                    recorder, volumes, config=QueueConfig(pause=pause, delay=delay), operators=5
                )
                decided = [[d.operators, d.code] for d in recorder.decisions]
                counts.update(json.dumps(decided).encode())
                said = [[d.explain, d.reason] for d in recorder.decisions]
                records.update(json.dumps(said, sort_keys=True).encode())
                total += len(decided)
                runs_done += 1
    print(f"{runs_done} runs, {total} decisions")
    print(f"counts and codes sha256 {counts.hexdigest()}")
    print(f"records and prose sha256 {records.hexdigest()}")


if __name__ == "__main__":
    main()
