"""Guards on hand-built sequences with known answers, their specs, states and composition."""

from __future__ import annotations

import json
import random

import pytest

from filters import make_filter
from scaling import (
    Confidence,
    Cooldown,
    Guard,
    Hysteresis,
    MaxStep,
    Scaler,
    Stabilization,
    ThresholdPolicy,
    available_guards,
    make_guard,
)

POLICY = ThresholdPolicy(capacity=50.0)

EXAMPLES: dict[str, dict[str, object]] = {
    "confidence": {"up": 0.5, "down": 2.0},
    "cooldown": {"up": 30.0, "down": 120.0},
    "hysteresis": {"band": 0.2},
    "max_step": {"up": 2, "down": 1},
    "stabilization": {"window": 60.0},
}


def drive(guard: Guard, steps: list[tuple[float, int]], current: int) -> list[int]:
    """Feed (t, target) pairs as the Scaler would, starting from ``current``; return the counts."""
    counts = []
    for t, target in steps:
        result, _ = guard.apply(target, current=current, filtered=0.0, t=t, policy=POLICY)
        guard.record(current, result, t, target=target)
        current = result
        counts.append(result)
    return counts


def test_every_guard_has_an_example() -> None:
    assert sorted(EXAMPLES) == available_guards()


# --- confidence -------------------------------------------------------------------------------


def test_confidence_band_is_as_wide_as_the_uncertainty() -> None:
    guard = Confidence(up=0.5, down=2.0)

    def decide(filtered: float, spread: float, current: int = 7) -> int:
        target = POLICY.needed(filtered)
        return guard.apply(
            target, current=current, filtered=filtered, t=0.0, policy=POLICY, spread=spread
        )[0]

    # Down from 7 (threshold 300) only once filtered + 2 spreads is below 300.
    assert [decide(290.0, spread) for spread in (1.0, 4.9, 5.1, 20.0)] == [6, 6, 7, 7]
    # Up provisions for filtered + half a spread, and never holds a scale-up back when up >= 0.
    assert [decide(345.0, spread) for spread in (0.0, 9.9, 10.1, 200.0)] == [7, 7, 8, 9]
    assert decide(351.0, 0.0) == 8
    # A certain level (spread 0) is plain thresholding.
    assert [decide(v, 0.0) for v in (249.0, 299.0, 301.0, 350.0)] == [5, 6, 7, 7]


def test_confidence_holds_while_the_filter_warms_up_and_refuses_silent_filters() -> None:
    guard = Confidence()
    held = guard.apply(3, current=7, filtered=140.0, t=0.0, policy=POLICY)
    assert held == (7, "held by confidence: no standard error yet (the filter warms up)")
    assert guard.apply(7, current=7, filtered=340.0, t=0.0, policy=POLICY) == (7, None)
    with pytest.raises(ValueError, match="decides from the filter's standard error"):
        Scaler(make_filter("tvd"), POLICY, [guard])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"up": 2.0, "down": 1.0}, "down=1.0 is not allowed: down must be a number >= 2"),
        ({"up": float("nan")}, "up=nan is not allowed"),
    ],
)
def test_confidence_refuses_bad_settings(params: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Confidence(**params)


# --- cooldown ---------------------------------------------------------------------------------


def test_cooldown_holds_each_direction_for_its_own_time() -> None:
    guard = Cooldown(up=30.0, down=120.0)
    assert drive(guard, [(0.0, 5), (29.9, 6), (30.0, 6)], current=4) == [5, 5, 6]
    guard = Cooldown(up=30.0, down=120.0)
    assert drive(guard, [(0.0, 3), (119.9, 2), (120.0, 2)], current=4) == [3, 3, 2]


def test_cooldown_scale_down_does_not_delay_scale_up() -> None:
    guard = Cooldown(up=30.0, down=120.0)
    assert drive(guard, [(0.0, 3), (1.0, 6)], current=4) == [3, 6]


def test_cooldown_scale_up_restarts_the_scale_down_cooldown() -> None:
    guard = Cooldown(up=30.0, down=120.0)
    assert drive(guard, [(0.0, 3), (100.0, 5)], current=4) == [3, 5]
    # 150 s after the scale-down but only 50 s after the scale-up: held.
    held = guard.apply(4, current=5, filtered=180.0, t=150.0, policy=POLICY)
    assert held == (5, "held by cooldown: last scale-up 50 s ago < 120 s")
    assert guard.apply(4, current=5, filtered=180.0, t=220.0, policy=POLICY) == (4, None)


def test_cooldown_reason_names_the_operation_and_the_times() -> None:
    guard = Cooldown(down=120.0)
    guard.record(5, 4, 1000.0, target=4)
    held = guard.apply(3, current=4, filtered=120.0, t=1040.5, policy=POLICY)
    assert held == (4, "held by cooldown: last scale-down 40.5 s ago < 120 s")


def test_cooldown_zero_never_holds_and_nothing_is_held_before_any_operation() -> None:
    assert drive(Cooldown(), [(0.0, 5), (0.5, 2), (1.0, 7)], current=4) == [5, 2, 7]
    assert drive(Cooldown(up=1e6, down=1e6), [(0.0, 5)], current=4) == [5]


# --- hysteresis -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("band", "filtered", "expected"),
    [
        (0.1, 95.0, 3),  # 95 needs 2 but is inside the band (threshold 2 * 50 * 0.9 = 90)
        (0.1, 90.0, 3),  # exactly at the threshold: not below it
        (0.1, 89.99, 2),
        (0.0, 100.0, 3),  # band 0 holds only a volume exactly at the threshold
        (0.0, 99.99, 2),
        (0.5, 50.0, 3),  # threshold 2 * 50 * 0.5 = 50; the policy alone would go to 1
        (0.5, 49.99, 1),
    ],
)
def test_hysteresis_dead_band_boundaries(band: float, filtered: float, expected: int) -> None:
    target = POLICY.needed(filtered)
    assert target < 3
    result, reason = Hysteresis(band=band).apply(
        target, current=3, filtered=filtered, t=0.0, policy=POLICY
    )
    assert result == expected
    assert (reason is None) == (result == target)


def test_hysteresis_reason_and_several_steps_down_at_once() -> None:
    guard = Hysteresis(band=0.1)
    assert guard.apply(2, current=3, filtered=95.0, t=0.0, policy=POLICY) == (
        3,
        "held by hysteresis: filtered 95.0 is not below 90.0 (band 0.1)",
    )
    # From 6, the band is under 5 operators' worth (225): 60 tuples/s drops straight to 2.
    assert guard.apply(2, current=6, filtered=60.0, t=0.0, policy=POLICY) == (2, None)


def test_hysteresis_never_touches_scale_up() -> None:
    guard = Hysteresis(band=0.9)
    assert guard.apply(4, current=3, filtered=151.0, t=0.0, policy=POLICY) == (4, None)


def test_hysteresis_band_must_be_below_one() -> None:
    for bad in (1.0, 1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match=rf"hysteresis: band={bad!r} is not allowed"):
            Hysteresis(band=bad)


# --- stabilization ----------------------------------------------------------------------------


def test_stabilization_keeps_the_peak_of_the_window_and_lets_go_after_it() -> None:
    steps = [(0.0, 6), (100.0, 4), (200.0, 2), (299.0, 2), (300.0, 2), (400.0, 2), (401.0, 5)]
    # 6 counts until t=300 (exactly 300 s old: gone); then 4 (from t=100) until t=400.
    assert drive(Stabilization(window=300.0), steps, current=6) == [6, 6, 6, 6, 4, 2, 5]


def test_stabilization_reasons() -> None:
    guard = Stabilization(window=300.0)
    drive(guard, [(0.0, 6), (100.0, 4)], current=6)
    assert guard.apply(2, current=6, filtered=90.0, t=120.0, policy=POLICY) == (
        6,
        "held by stabilization: 6 recommended 120 s ago, within 300 s",
    )
    assert guard.apply(2, current=6, filtered=90.0, t=300.0, policy=POLICY) == (
        4,
        "limited by stabilization: 4 recommended 200 s ago, within 300 s",
    )


def test_stabilization_never_scales_above_the_current_count() -> None:
    guard = Stabilization(window=300.0)
    guard.record(3, 3, 0.0, target=8)  # 8 was recommended but not carried out
    assert guard.apply(2, current=3, filtered=90.0, t=10.0, policy=POLICY)[0] == 3


def test_stabilization_equals_the_max_over_the_window_on_random_sequences() -> None:
    rng = random.Random(3)
    window, t = 37.5, -1e6
    guard, history = Stabilization(window=window), []
    for _ in range(3000):
        t += rng.choice([0.25, 0.5, 1.5, 7.0, 40.0])
        target = rng.randint(0, 30)
        history.append((t, target))
        expected = max(rec for time, rec in history if t - time < window)
        # current above everything, so the result is exactly the window's peak
        result, _ = guard.apply(target, current=100, filtered=0.0, t=t, policy=POLICY)
        assert result == expected
        guard.record(100, 100, t, target=target)
        assert len(guard.state_dict()["state"]["_recent"]) <= 31  # strictly decreasing: bounded


def test_stabilization_window_zero_is_off() -> None:
    assert drive(Stabilization(window=0.0), [(0.0, 6), (1.0, 2)], current=6) == [6, 2]


# --- max_step ---------------------------------------------------------------------------------


def test_max_step_limits_each_direction() -> None:
    guard = MaxStep(up=2, down=1)
    assert guard.apply(9, current=3, filtered=0.0, t=0.0, policy=POLICY) == (
        5,
        "limited by max_step: at most +2 per decision",
    )
    assert guard.apply(5, current=3, filtered=0.0, t=0.0, policy=POLICY) == (5, None)
    assert guard.apply(0, current=3, filtered=0.0, t=0.0, policy=POLICY) == (
        2,
        "limited by max_step: at most -1 per decision",
    )
    assert drive(MaxStep(down=2), [(0.0, 1), (1.0, 1), (2.0, 1)], current=6) == [4, 2, 1]
    assert drive(MaxStep(), [(0.0, 40), (1.0, 1)], current=6) == [40, 1]


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, float("inf")])
def test_max_step_refuses_non_positive_or_fractional_steps(bad: object) -> None:
    with pytest.raises(ValueError, match=rf"max_step: down={bad!r} is not allowed"):
        MaxStep(down=bad)  # type: ignore[arg-type]


# --- composition ------------------------------------------------------------------------------


def test_order_matters_stabilization_before_max_step() -> None:
    """Stabilisation then max_step steps down once per decision; max_step first stalls.

    With max_step first, stabilisation is given (and remembers) the limited step, so the
    next step down is held for a whole window.
    """
    volumes = [(0.0, 300.0), (150.0, 100.0), (160.0, 100.0), (170.0, 100.0), (180.0, 100.0)]
    counts = {}
    for order in ("stabilization first", "max_step first"):
        guards = [Stabilization(window=100.0), MaxStep(down=1)]
        if order == "max_step first":
            guards.reverse()
        scaler = Scaler(make_filter("raw"), POLICY, guards, operators=6)
        counts[order] = [scaler.observe(v, t).operators for t, v in volumes]
    assert counts == {"stabilization first": [6, 5, 4, 3, 2], "max_step first": [6, 5, 5, 5, 5]}


# --- specs and state --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_spec_round_trips_through_json(name: str) -> None:
    guard = make_guard(name, **EXAMPLES[name])
    assert guard.spec == {"name": name, **EXAMPLES[name]}
    assert make_guard(json.loads(json.dumps(guard.spec))).spec == guard.spec
    assert make_guard(name).spec["name"] == name  # defaults exist for every setting


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_state_round_trip_through_json_continues_identically(name: str) -> None:
    rng = random.Random(11)
    steps = [(0.5 * i, rng.randint(1, 9)) for i in range(400)]
    original = make_guard(name, **EXAMPLES[name])
    drive(original, steps[:200], current=5)
    current = drive(make_guard(name, **EXAMPLES[name]), steps[:200], current=5)[-1]
    restored = make_guard(name, **EXAMPLES[name])
    restored.load_state_dict(json.loads(json.dumps(original.state_dict(), allow_nan=False)))
    assert drive(restored, steps[200:], current) == drive(original, steps[200:], current)


def test_malformed_or_foreign_state_is_refused_and_changes_nothing() -> None:
    cooldown = Cooldown(up=30.0)
    cooldown.record(1, 2, 5.0, target=2)
    stabilization = Stabilization(window=60.0)
    stabilization.record(3, 3, 5.0, target=3)
    bad_states: list[tuple[Guard, object, str]] = [
        (cooldown, {"spec": cooldown.spec}, "keys 'spec' and 'state'"),
        (cooldown, Cooldown(up=31.0).state_dict(), "state was taken from"),
        (cooldown, {"spec": cooldown.spec, "state": {"_last_up": 1.0}}, "state fields"),
        (
            cooldown,
            {"spec": cooldown.spec, "state": {"_last_up": "1", "_last_down": None}},
            "_last_up",
        ),
        (stabilization, {"spec": stabilization.spec, "state": {"_recent": [[1.0]]}}, "pairs"),
        (
            stabilization,
            {"spec": stabilization.spec, "state": {"_recent": [[1.0, -2]]}},
            "recommendation",
        ),
        (
            stabilization,
            {"spec": stabilization.spec, "state": {"_recent": [[1.0, 2], [2.0, 5]]}},
            "recommendations must decrease",
        ),
        (MaxStep(), {"spec": MaxStep().spec, "state": {"_x": 1}}, "state fields"),
    ]
    for guard, state, message in bad_states:
        before = json.dumps(guard.state_dict())
        with pytest.raises(ValueError, match=message):
            guard.load_state_dict(state)  # type: ignore[arg-type]
        assert json.dumps(guard.state_dict()) == before


def test_make_guard_refuses_unknown_names_and_settings() -> None:
    with pytest.raises(
        ValueError, match=r"name='delay' is not a guard; allowed names: \['confidence'"
    ):
        make_guard({"name": "delay"})
    with pytest.raises(
        ValueError, match=r"cooldown: unknown parameter 'window'; allowed parameters"
    ):
        make_guard({"name": "cooldown", "window": 3})
    with pytest.raises(ValueError, match="has no 'name'"):
        make_guard({"up": 3})
    with pytest.raises(ValueError, match="not both"):
        make_guard({"name": "cooldown"}, up=3)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_invalid_settings_name_parameter_value_and_rule(name: str) -> None:
    for param in type(make_guard(name)).parameters():
        for bad in (float("nan"), -1.0, "bogus", True):
            with pytest.raises(ValueError) as error:
                make_guard(name, **{param: bad})
            message = str(error.value)
            assert f"{name}: {param}={bad!r} is not allowed" in message, message
