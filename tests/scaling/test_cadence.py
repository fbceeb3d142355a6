"""A sample weighs the interval it covers over the stream's typical one (scaling.cadence):
what that changes for a stream sampled unevenly, and what it leaves alone."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from filters import available_filters
from scaling import Scaler
from scaling.cadence import HEAVIEST, INTERVALS, LIGHTEST, Cadence

SPEC = {"policy": {"capacity": 100.0, "min_operators": 1, "max_operators": 6}}


def test_the_weight_is_the_interval_over_the_median_of_the_last_ones() -> None:
    cadence = Cadence()
    weights = [cadence.seen(interval) for interval in [1.5] * 40 + [10.0] * 20]
    assert weights[:40] == [1.0] * 40
    assert weights[40:] == [10.0 / 1.5] * 20  # 20 slow batches of 60 leave the median at 1.5
    assert [cadence.seen(10.0) for _ in range(INTERVALS)][-1] == 1.0  # slow is now typical
    assert len(cadence.intervals) == INTERVALS


def test_a_sample_that_covers_next_to_no_time_weighs_the_least_weight_not_zero() -> None:
    # 5e-324 s after a sample of a stream sampled every ~1e15 s: the share rounds to 0.0, which
    # no filter takes (schemathesis found it: a 422 on a schema-valid batch).
    cadence = Cadence([9.8e14])
    assert cadence.seen(5e-324) == LIGHTEST
    assert Cadence([1000.0] * 10).seen(1e-9) == LIGHTEST
    scaler = Scaler.from_spec({"policy": {"capacity": 50.0}}, operators=1)
    for t, volume in [(-984409098180152.8, 30.0), (-5e-324, 4.5e10), (0.0, 2.7e-89),
                      (78925388672818.5, 1.6e11)]:  # fmt: skip
        decision = scaler.observe(volume, t)
        assert math.isfinite(decision.filtered)


@pytest.mark.parametrize("name", available_filters())
def test_a_sample_that_covers_endless_typical_intervals_weighs_the_most_weight_not_inf(
    name: str,
) -> None:
    # 1e15 s after samples 1e-300 s apart: 1e315 typical intervals, an infinite weight, which
    # every filter refused (a helper's fuzzing, session 29: a 422 on a schema-valid batch).
    assert Cadence([1e-300, 1e-300]).seen(1e15) == HEAVIEST
    assert Cadence([1.0] * 10).seen(1e300) == HEAVIEST
    scaler = Scaler.from_spec({"filter": {"name": name}, **SPEC}, operators=1)
    for t, volume in [(0.0, 100.0), (1e-300, 200.0), (2e-300, 300.0), (1e15, 400.0)]:
        decision = scaler.observe(volume, t)
        assert math.isfinite(decision.filtered)


def test_an_even_grid_at_fractions_of_a_second_weighs_exactly_one() -> None:
    cadence, times = Cadence(), [0.1 * k for k in range(1000)]
    weights = {cadence.seen(b - a) for a, b in zip(times, times[1:], strict=False)}
    assert weights == {1.0}


def micro_batches(slow: float) -> list[tuple[float, float, float]]:
    """``(t, volume, backlog)``: batches 1.5 s apart at 100 rows/s for a minute, then 400 rows/s
    arriving while each batch takes ``slow`` s (the job falls behind)."""
    rng = np.random.default_rng(1)
    rows, t, backlog = [], 0.0, 0.0
    while t < 60.0:
        rows.append((t, float(100.0 + rng.normal(0.0, 10.0)), 0.0))
        t += 1.5
    for _ in range(20):
        t += slow
        backlog += 200.0 * slow
        rows.append((t, float(400.0 + rng.normal(0.0, 10.0)), backlog))
    return rows


def samples_to_follow(slow: float) -> int:
    scaler = Scaler.from_spec(SPEC, operators=2)
    for index, (t, volume, backlog) in enumerate(micro_batches(slow)):
        decision = scaler.observe(volume, t, backlog=backlog, running=2, processed=200.0)
        if t > 60.0 and decision.filtered > 300.0:
            return index - 40
    return 99


def test_a_job_whose_batches_slow_down_is_followed_by_the_seconds_they_cover() -> None:
    # The default filter declares a change at 100 rows/s of resolution after 17 samples' worth
    # of evidence (docs/default.md): 17 slow batches of 10 s were 170 s on real Spark.
    assert samples_to_follow(slow=1.5) >= 15
    assert samples_to_follow(slow=10.0) <= 3


def test_an_even_stream_filters_alike_at_any_interval() -> None:
    volumes = [float(v) for v in 300.0 + np.random.default_rng(2).normal(0.0, 30.0, 400)]
    levels = []
    for step in (1.0, 10.0, 0.25):
        scaler = Scaler.from_spec(SPEC, operators=3)
        levels.append([scaler.observe(v, step * k).filtered for k, v in enumerate(volumes)])
    assert levels[0] == levels[1] == levels[2]


def test_the_intervals_travel_with_the_state_and_older_states_load_with_the_last_one() -> None:
    scaler = Scaler.from_spec(SPEC, operators=2)
    rows = micro_batches(slow=10.0)
    for t, volume, backlog in rows[:50]:
        scaler.observe(volume, t, backlog=backlog, running=2, processed=200.0)
    state = json.loads(json.dumps(scaler.state_dict()))
    restored = Scaler.from_spec(SPEC, operators=2)
    restored.load_state_dict(state)
    assert restored.cadence.intervals == scaler.cadence.intervals
    rest = [(v, t, b) for t, v, b in rows[50:]]
    assert [restored.observe(v, t, backlog=b, running=2, processed=200.0) for v, t, b in rest] == [
        scaler.observe(v, t, backlog=b, running=2, processed=200.0) for v, t, b in rest
    ]
    old = {key: value for key, value in state.items() if key != "intervals"}
    restored.load_state_dict(old)
    assert restored.cadence.intervals == [state["interval"]]


@pytest.mark.parametrize(
    ("intervals", "message"),
    [
        ([1.0, 0.0], "intervals=0.0 is not allowed"),
        ([1.0, "2"], "intervals='2' is not allowed"),
        ("1.0", "a list of at most 64 intervals"),
        ([1.0] * 65, "a list of at most 64 intervals"),
    ],
)
def test_bad_intervals_are_refused_and_change_nothing(intervals: object, message: str) -> None:
    scaler = Scaler.from_spec(SPEC, operators=2)
    scaler.observe(100.0, 0.0)
    scaler.observe(100.0, 1.5)
    before = json.dumps(scaler.state_dict())
    with pytest.raises(ValueError, match=message):
        scaler.load_state_dict({**scaler.state_dict(), "intervals": intervals})
    assert json.dumps(scaler.state_dict()) == before
