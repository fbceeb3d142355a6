"""benchmarks.calibration: the late seconds the model expects against those a run has."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.calibration import KINDS, cell_tally, table
from benchmarks.trace_decision import Traced
from simulator.experiments.compare import CompareCell, baselines, queue_run


def test_every_priced_decision_is_tallied_once_by_what_its_window_holds() -> None:
    tally = cell_tally((8, 0), "paper", 5.0, 1)
    assert tally.shape == (len(KINDS), 3)
    # The same run, traced here: its priced decisions, and those that change the count.
    spec = baselines()["steadyscale"]
    policy = Traced(**{key: value for key, value in spec.items() if key != "name"})
    cell = CompareCell("steadyscale", spec, "paper", 1, 5.0, pause=8, delay=0)
    _, result = queue_run(cell, policy)
    end = result.timeline["t"][-1]  # a decision after the last step has no window in the run
    priced = [d for d in policy.decisions if d.explain and "candidates" in d.explain and d.t <= end]
    assert tally[:, 0].sum() == len(priced)
    assert tally[2, 0] == sum(d.operators > d.previous for d in priced) > 0
    assert tally[3, 0] == sum(d.operators < d.previous for d in priced) > 0
    # No window has more late seconds, expected or had, than its horizon's seconds.
    horizon = max(float(d.explain["horizon"]) for d in priced)  # type: ignore[index]
    assert np.all(tally[:, 1] <= tally[:, 0] * horizon)
    assert np.all(tally[:, 2] <= tally[:, 0] * horizon)
    assert np.all(tally >= 0.0)
    # Expected: the chosen count's late seconds and its correction's (chance x the late seconds
    # an operation brings), for the share of its horizon inside the run.
    times, step = result.timeline["t"], float(result.timeline["t"][1] - result.timeline["t"][0])
    expected, corrections = 0.0, 0.0
    for d in priced:
        record: dict = d.explain  # type: ignore[assignment]
        row = next(r for r in record["candidates"] if r["operators"] == d.operators)
        start = int(np.searchsorted(times, d.t))
        stop = min(int(np.searchsorted(times, d.t + record["horizon"])), len(times))
        share = (stop - start) * step / record["horizon"]
        correction = row["correction"] * record["inputs"]["operation_late"]
        expected += (row["late_seconds"] + correction) * share
        corrections += correction * share
    assert tally[:, 1].sum() == pytest.approx(expected) and corrections > 0.0


def test_the_table_gives_means_per_window_and_their_ratio() -> None:
    tally = np.array([[4.0, 2.0, 6.0], [0.0, 0.0, 0.0], [2.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    lines = table({(8, 30): tally})
    assert lines[2] == (
        "| (8, 30) | 4/0/2/1 | 0.5 → 1.5 (3×) | — | 0 → 0.5 (∞) | 1 → 0 (0×) | 0.429 → 1 (2.3×) |"
    )
