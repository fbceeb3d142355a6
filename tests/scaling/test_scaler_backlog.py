"""The Scaler deciding for a stage that reports its backlog: the cost model's reason codes,
its record, the level's error (what it measures of the job's actuation:
tests/scaling/test_scaler_actuation.py)."""

from __future__ import annotations

import numpy as np
import pytest

from filters import make_filter
from scaling import Decision, Scaler, ThresholdPolicy, make_guard
from scaling.measure import level_error
from tests.scaling.test_scaler import POLICY

SURGE = (520.0, 2000.0)  # 520/s arriving, 2,000 waiting: 8 operators (400/s) fall behind
# 1,000 a late second, stated: the counts below are that price's. Unstated, the assumed 20 s
# restart (10 s over the latency) caps it at 240 (tests/scaling/test_choice.py).
STATED = ThresholdPolicy(capacity=50.0, late_price=1000.0)


def cost_rows(decision: Decision) -> dict[int, dict[str, float]]:
    assert decision.explain is not None and decision.explain["model"] == "cost"
    return {row["operators"]: row for row in decision.explain["candidates"]}


def assert_reason_is_true(decision: Decision) -> None:
    """The prose names the chosen count's expected cost and each neighbour's, as explain has
    them, and compares no two numbers wrongly (it compares none: "a < b < c" would also have
    compared the two neighbours)."""
    rows = cost_rows(decision)

    def late(row: dict[str, float]) -> str:  # and the chance of a correction, from 1 %
        percent = round(100.0 * row["correction"])
        corrected = f", {percent} % corrected later" if percent >= 1 else ""
        return f"({row['late_seconds']:.1f} late s{corrected})"

    chosen = rows[decision.operators]
    head = f"{decision.operators}: expected cost {chosen['total']:.0f} "
    assert decision.reason.startswith(head + late(chosen))
    for count, row in rows.items():
        if count != decision.operators:
            assert f"{count} would cost {row['total']:.0f} {late(row)}" in decision.reason
    assert " < " not in decision.reason.split("; level")[0]
    backlog = decision.explain["inputs"]["backlog"]  # type: ignore[index]
    assert f"backlog {backlog:.0f}" in decision.reason


def test_reason_codes_of_a_stage_reporting_its_backlog() -> None:
    # WarmingUp: changepoint has no standard error for its first 8 samples: the count is held.
    default = Scaler.from_spec({"policy": {"capacity": 50.0}}, operators=8)
    rng = np.random.default_rng(1)
    warm = [
        default.observe(380.0 + rng.normal(0.0, 20.0), float(t), backlog=500.0) for t in range(9)
    ]
    assert [d.code for d in warm[:8]] == ["WarmingUp"] * 8
    assert all(d.operators == 8 and "warms up" in d.reason for d in warm[:8])
    assert warm[8].code != "WarmingUp" and warm[8].explain["model"] == "cost"  # type: ignore[index]
    # ScaledUp, then HeldForCost: the level alone needs 11, but dropping from 32 restarts. (32:
    # the assumed 20 s restart is longer than the 10 s latency, and the more run after it, the
    # sooner the backlog it piles up is served: by the simulator's latency, fewer late seconds.)
    scaler = Scaler(make_filter("raw"), STATED, operators=8)
    up = scaler.observe(SURGE[0], 0.0, backlog=SURGE[1])
    assert (up.operators, up.code, up.action) == (32, "ScaledUp", "up")
    held = scaler.observe(SURGE[0], 100.0, backlog=0.0)
    assert (held.operators, held.code) == (32, "HeldForCost") and POLICY.needed(520.0) == 11
    # Steady: the level needs the count that runs, and it is the cheapest.
    steady = Scaler(make_filter("raw"), POLICY, operators=8).observe(380.0, 0.0, backlog=0.0)
    assert (steady.operators, steady.code) == (8, "Steady")
    # ScaledDown: more than needed, and (no restart) nothing outweighs the saving.
    free = ThresholdPolicy(capacity=50.0, restart=0.0)
    idle = Scaler(make_filter("raw"), free, operators=12).observe(380.0, 0.0, backlog=0.0)
    assert (idle.operators, idle.code, idle.action) == (8, "ScaledDown", "down")
    for decision in (up, held, steady, idle):
        assert_reason_is_true(decision)


def test_limited_by_bound_names_the_cheapest_count() -> None:
    capped = ThresholdPolicy(capacity=50.0, max_operators=12, late_price=1000.0)
    decision = Scaler(make_filter("raw"), capped, operators=8).observe(520.0, 0.0, backlog=2000.0)
    assert (decision.operators, decision.code) == (12, "LimitedByBound")
    assert decision.explain is not None and decision.explain["unbounded"] == 32
    assert decision.reason.endswith("; 32 is cheapest, limited by max_operators")
    assert_reason_is_true(decision)
    floor = ThresholdPolicy(capacity=50.0, min_operators=20, late_price=1000.0)
    raised = Scaler(make_filter("raw"), floor, operators=10).observe(380.0, 0.0, backlog=0.0)
    # Holding 10 is cheapest but below the bound: the cheapest operation within it, 23 (more
    # than 20 serve the backlog the 20 s restart piles up sooner).
    assert (raised.operators, raised.code) == (23, "LimitedByBound")
    assert raised.reason.endswith("; 10 is cheapest, limited by min_operators")
    assert_reason_is_true(raised)


@pytest.mark.parametrize("step", [250.0, 400.0])
def test_a_load_past_the_largest_count_gets_the_largest_count_at_once(step: float) -> None:
    # 50/s on one executor of 100/s, then a step to 250/s (3 executors all but keep up, the
    # level's slope says they may not) or 400/s (none of the allowed counts keeps up). Priced
    # with the terminal term capped, every allowed count cost the same, and the fewest won:
    # the running one, held while the backlog grew (found in session 20, on real Spark).
    policy = ThresholdPolicy(capacity=100.0, min_operators=1, max_operators=3)
    scaler = Scaler(make_filter("moving_median", w=3), policy, operators=1)
    t, decisions = 0.0, []
    while t < 60.0:
        volume = 50.0 if t < 40.0 else step
        decisions.append(scaler.observe(volume, t, backlog=0.0, running=scaler.operators))
        t += 1.4
    after = [d for d in decisions if d.t >= 40.0]
    seen = next(i for i, d in enumerate(after) if d.filtered == step)  # the median moved
    assert after[seen].operators == 3 and after[seen].code == "LimitedByBound"
    assert all(d.operators == 3 for d in after[seen:])
    rows = cost_rows(after[seen])
    assert rows[2]["late_seconds"] > rows[3]["late_seconds"] + 100.0  # further behind, later


def test_limited_by_guard_with_a_cooldown() -> None:
    guards = [make_guard("cooldown", up=60.0)]
    scaler = Scaler(make_filter("raw"), STATED, guards, operators=8)
    first = scaler.observe(520.0, 0.0, backlog=2000.0)
    assert (first.operators, first.code) == (32, "ScaledUp")
    # 10 s later the cost model wants more than 32, the cooldown holds it.
    second = scaler.observe(2000.0, 10.0, backlog=30000.0)
    assert cost_rows(second) and second.explain["unbounded"] > 32  # type: ignore[index]
    assert (second.operators, second.code) == (32, "LimitedByGuard")
    assert "held by cooldown: last scale-up 10 s ago < 60 s" in second.reason


def test_volume_only_decisions_keep_the_threshold_and_carry_codes() -> None:
    scaler = Scaler(make_filter("raw"), POLICY, operators=8)
    codes = [scaler.observe(v, float(t)).code for t, v in enumerate([380.0, 520.0, 300.0, 300.0])]
    assert codes == ["Steady", "ScaledUp", "ScaledDown", "Steady"]
    capped = Scaler(make_filter("raw"), ThresholdPolicy(capacity=50.0, max_operators=4))
    assert capped.observe(1000.0, 0.0).code == "LimitedByBound"


def test_a_reported_backlog_is_priced_and_a_rising_level_followed() -> None:
    # What replaced catch_up and lead: the backlog and the slope enter the cost model.
    scaler = Scaler(make_filter("raw"), ThresholdPolicy(capacity=50.0, restart=0.0), operators=6)
    assert scaler.observe(300.0, 0.0).operators == 6  # volume alone: 300 / 50
    behind = scaler.observe(300.0, 1.0, backlog=3000.0)
    assert behind.operators == 7 and behind.backlog == 3000.0  # 6 leave 3,000 at the edge
    rows = cost_rows(behind)
    assert rows[6]["late_seconds"] > 0.0 == rows[7]["late_seconds"]
    # A ramp of 2/s per second: the cost model runs ahead of the level, the threshold does not.
    ramp = [(float(t), 300.0 + 2.0 * t) for t in range(121)]
    queue = Scaler(make_filter("raw"), POLICY, operators=6)
    volume_only = Scaler(make_filter("raw"), POLICY, operators=6)
    for t, volume in ramp:
        ahead = queue.observe(volume, t, backlog=0.0)
        plain = volume_only.observe(volume, t)
    assert plain.operators == 11  # ceil(540 / 50)
    assert ahead.operators > 11 and ahead.explain["inputs"]["slope"] > 1.5  # type: ignore[index]


def test_more_noise_more_operators() -> None:
    # What replaced the headroom: the arrivals' variance per second in the late seconds.
    rng = np.random.default_rng(3)
    quiet = Scaler(make_filter("changepoint", resolution=50.0), POLICY, operators=8)
    noisy = Scaler(make_filter("changepoint", resolution=50.0), POLICY, operators=8)
    for t in range(300):
        calm = quiet.observe(380.0 + rng.normal(0.0, 10.0), float(t), backlog=0.0)
        loud = noisy.observe(max(0.0, 380.0 + rng.normal(0.0, 150.0)), float(t), backlog=0.0)
    assert calm.operators == 8
    assert 5.0 < calm.explain["inputs"]["noise_per_second"] < 15.0  # type: ignore[index]
    assert 120.0 < loud.explain["inputs"]["noise_per_second"] < 180.0  # type: ignore[index]
    assert loud.operators > calm.operators


def test_a_volume_right_after_a_scaling_operation_is_filtered_like_any_other() -> None:
    # The quiet period and its weight are gone: every sample counts.
    scaler = Scaler(make_filter("raw"), POLICY, operators=6)
    assert scaler.observe(350.0, 10.0).operators == 7  # an operation at t = 10
    burst = scaler.observe(1100.0, 15.0)
    assert burst.filtered == 1100.0 and burst.operators == 22


def test_a_level_that_lags_its_samples_is_priced_with_the_error_measured() -> None:
    # A ramp the level lags: the samples run above it, so its error is the lag, not the
    # standard error of the mean of the samples since the last change.
    rng = np.random.default_rng(11)
    scaler = Scaler.from_spec({"policy": {"capacity": 50.0}}, operators=8)
    for t in range(600):
        volume = 200.0 + 0.3 * t + rng.normal(0.0, 40.0)
        decision = scaler.observe(max(volume, 0.0), float(t), backlog=0.0)
    inputs = decision.explain["inputs"]  # type: ignore[index]
    spread, lag = scaler.filter.spread, 200.0 + 0.3 * 599 - decision.filtered
    assert spread is not None and lag > 20.0  # the level is ~26 behind, its spread says 14
    assert inputs["level_error"] > 1.3 * spread
    assert abs(lag - inputs["level_error"]) < abs(lag - spread)
    assert inputs["level_error"] == pytest.approx(  # the explain rounds to 4 places
        level_error(spread, scaler.state_dict()["missed"], scaler.filter.noise, 1.0), abs=1e-4
    )
    # A level that holds: the error measured is noise, and the standard error stands.
    calm = Scaler.from_spec({"policy": {"capacity": 50.0}}, operators=8)
    for t in range(600):
        steady = calm.observe(380.0 + rng.normal(0.0, 40.0), float(t), backlog=0.0)
    assert steady.explain["inputs"]["level_error"] < 10.0  # type: ignore[index]


def test_the_trend_is_followed_from_the_first_sample_that_reports_a_backlog() -> None:
    """A stream of volumes alone decides without the trend, and does not pay for it; one that
    reports its backlog later starts it then, as a stored state of before the trend would."""
    volumes = 300.0 + np.random.default_rng(3).normal(0.0, 30.0, 200)
    alone = Scaler.from_spec({"policy": {"capacity": 50.0}}, operators=6)
    for t, volume in enumerate(volumes):
        alone.observe(float(volume), float(t))
    assert alone.trend.state_dict() == {
        "filtered": None, "slope": 0.0, "excess": 0.0, "missed": 0.0, "wander": 0.0,
    }  # fmt: skip
    later = alone.observe(330.0, 200.0, backlog=0.0, running=6, processed=330.0)
    assert later.explain is not None and later.explain["inputs"]["slope"] == 0.0
    assert alone.trend.filtered == later.filtered
    ramp = [later.filtered + 2.0 * k for k in range(1, 120)]  # the level rises from then on
    for k, volume in enumerate(ramp, start=201):
        decision = alone.observe(volume, float(k), backlog=0.0, running=6, processed=volume)
    assert decision.explain is not None and decision.explain["inputs"]["slope"] > 0.5
