"""What one decision costs: the default Scaler's ``observe`` per sample, volume alone and with
the backlog the cost model decides from, against the default filter's own update.

    .venv/bin/python -m benchmarks.decision
    .venv/bin/python -m benchmarks.decision --samples 20000 --rounds 9

A queue of 50 records/s operators is fed a noisy level that steps between 380 and 520 records/s
every 300 s (SNR 10), with the backlog, running count and processed rate a fluid queue with an
8 s restart gives, so that decisions hold, scale up and down as in the compare grid. Each round
times the three in turn (round-robin, so that a busy machine slows all three alike) and the
median over rounds is printed: microseconds per sample, and each over the filter's update (the
ratio holds across machines better than the microseconds). Target (issue 30): the decision
with a backlog at most 50 µs per sample (median). A change made for speed must not change a
decision: ``benchmarks.volume_decisions`` and ``benchmarks.backlog_decisions`` print
fingerprints to compare with the version before it (``--base``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from filters import make_filter
from scaling import Scaler

CAPACITY = 50.0


def samples(count: int, seed: int = 1) -> list[tuple[float, float, float, int, float]]:
    """``(t, volume, backlog, running, processed)`` of a fluid queue that runs the default's
    decisions, one per second."""
    rng = np.random.default_rng(seed)
    scaler = Scaler.from_spec({"policy": {"capacity": CAPACITY}}, operators=8)
    backlog, running, paused_until, rows = 0.0, 8, -1.0, []
    for second in range(count):
        level = 380.0 if (second // 300) % 2 == 0 else 520.0
        volume = max(0.0, level + rng.normal(0.0, level / 10**0.5))
        capacity = 0.0 if second < paused_until else running * CAPACITY
        processed = min(backlog + volume, capacity)
        backlog = max(backlog + volume - processed, 0.0)
        rows.append((float(second), volume, backlog, running, processed))
        decided = scaler.observe(
            volume, float(second), backlog=backlog, running=running, processed=processed
        ).operators
        if decided != running:
            running, paused_until = decided, second + 8.0
    return rows


def timed(run: Callable[[], None], count: int) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) / count * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    rows = samples(args.samples)

    def filter_only() -> None:
        update = make_filter({"name": "changepoint", "resolution": CAPACITY}).update
        for _, volume, _, _, _ in rows:
            update(volume)

    def volume_only() -> None:
        observe = Scaler.from_spec({"policy": {"capacity": CAPACITY}}, operators=8).observe
        for t, volume, _, _, _ in rows:
            observe(volume, t)

    def with_backlog() -> None:
        observe = Scaler.from_spec({"policy": {"capacity": CAPACITY}}, operators=8).observe
        for t, volume, backlog, running, processed in rows:
            observe(volume, t, backlog=backlog, running=running, processed=processed)

    runs = {"filter": filter_only, "volume only": volume_only, "with backlog": with_backlog}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, run in runs.items():
            times[name].append(timed(run, len(rows)))
    reference = statistics.median(times["filter"])
    print(f"per sample, median of {args.rounds} rounds of {len(rows)} samples:")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:13s} {median:7.1f} µs  ({median / reference:5.1f} x the filter's update)")
    scaler = Scaler.from_spec({"policy": {"capacity": CAPACITY}}, operators=8)
    priced = [
        decision.explain["priced"]
        for t, volume, backlog, running, processed in rows
        if (
            decision := scaler.observe(
                volume, t, backlog=backlog, running=running, processed=processed
            )
        ).explain
        and "priced" in decision.explain
    ]
    print(
        f"counts priced per decision with a backlog: median {statistics.median(priced):g}, "
        f"mean {statistics.mean(priced):.1f}"
    )
    target = statistics.median(times["with backlog"])
    print(
        f"decision with a backlog: {target:.1f} µs, target 50 µs: "
        f"{'met' if target <= 50.0 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
