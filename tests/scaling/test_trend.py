"""The level's trend (scaling.trend): measured per second whatever the sampling, and only from
the end of the filter's warm-up."""

from __future__ import annotations

import json
import math

import pytest

from scaling import Scaler
from scaling.trend import Trend


def ramp(step: float, seconds: float = 600.0) -> Trend:
    """A level rising by 0.5 records/s every second, sampled every ``step`` seconds."""
    trend, t, last = Trend(), 0.0, None
    while t <= seconds:
        level = 100.0 + 0.5 * t
        trend.follow(level, level, None if last is None else t - last, warm=True)
        last, t = t, t + step
    return trend


@pytest.mark.parametrize("step", [1.0, 5.0, 20.0])
def test_a_ramp_reads_as_the_same_slope_at_any_sampling_interval(step: float) -> None:
    assert ramp(step).slope == pytest.approx(0.5, rel=1e-3)


def test_nothing_is_measured_while_the_filter_warms_up() -> None:
    trend = Trend()
    for elapsed, level in [(None, 100.0), (1.0, 400.0), (1.0, 50.0)]:
        trend.follow(level + 30.0, level, elapsed, warm=False)
    assert (trend.slope, trend.excess, trend.missed, trend.wander) == (0.0, 0.0, 0.0, 0.0)
    assert trend.filtered == 50.0


def test_the_state_round_trips_through_json() -> None:
    trend = ramp(1.0, seconds=50.0)
    copy = Trend()
    copy.load_state_dict(json.loads(json.dumps(trend.state_dict())))
    for level in (126.0, 127.0):
        trend.follow(140.0, level, 1.0, warm=True)
        copy.follow(140.0, level, 1.0, warm=True)
    assert copy.state_dict() == trend.state_dict()
    assert trend.excess > 0.0 and trend.missed > 0.0


@pytest.mark.parametrize("name", ["raw", "tvd", "ekf", "moving_median"])
def test_a_level_that_moves_within_1e_300_s_wanders_by_a_finite_rate(name: str) -> None:
    """A step over 1e-300 s: step² / elapsed overflowed, the wander went inf, and the cost
    model's terms NaN ("cannot convert float NaN to integer": a 422 on a batch within every
    bound of the service; found by fuzzing the Scaler, session 29)."""
    scaler = Scaler.from_spec({"filter": {"name": name}, "policy": {"capacity": 0.001}})
    samples = [(5e-324, 1e12, 0.0, 10**9, None), (1e-300, 1e6, 1e12, 10**9, 0.0),
               (1e-9, 300.0, 1.0, 1000, 300.0), (1.0, 300.0, 0.0, 1000, 300.0)]  # fmt: skip
    for t, volume, backlog, running, processed in samples:
        decision = scaler.observe(volume, t, backlog=backlog, running=running, processed=processed)
        assert decision.operators >= 0
        assert math.isfinite(scaler.trend.wander) and math.isfinite(scaler.trend.slope)
