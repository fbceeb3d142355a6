"""The Scaler: decisions on hand-built sequences, refusal of bad input, state and specs."""

from __future__ import annotations

import dataclasses
import json
import math
import re

import numpy as np
import pytest

from filters import make_filter
from filters.base import ParameterError
from scaling import Decision, Scaler, ThresholdPolicy, make_guard

POLICY = ThresholdPolicy(capacity=50.0)

ALL_GUARDS = [
    {"name": "hysteresis", "band": 0.1},
    {"name": "cooldown", "up": 20.0, "down": 60.0},
    {"name": "stabilization", "window": 45.0},
    {"name": "max_step", "up": 3, "down": 1},
]
SPEC = {"filter": {"name": "tvd", "lam": 40.0}, "policy": POLICY.spec, "guards": ALL_GUARDS}


def noisy_volumes(n: int = 600, seed: int = 5) -> list[float]:
    rng = np.random.default_rng(seed)
    trend = np.repeat(rng.uniform(100.0, 500.0, n // 50 + 1), 50)[:n]
    return [float(v) for v in np.clip(trend + rng.normal(0.0, 40.0, n), 0.0, None)]


def run(scaler: Scaler, samples: list[tuple[float, float]]) -> list[Decision]:
    return [scaler.observe(volume, t) for t, volume in samples]


def test_raw_threshold_decisions() -> None:
    scaler = Scaler(make_filter("raw"), POLICY, operators=2)
    decisions = run(scaler, [(0.0, 90.0), (1.0, 160.0), (2.0, 160.0), (3.0, 40.0), (4.0, 0.0)])
    assert [(d.previous, d.operators, d.action) for d in decisions] == [
        (2, 2, "none"),
        (2, 4, "up"),
        (4, 4, "none"),
        (4, 1, "down"),
        (1, 1, "none"),
    ]
    assert [d.reason for d in decisions] == [
        "filtered 90.0 needs 2 = 2",
        "filtered 160.0 needs 4 > 2",
        "filtered 160.0 needs 4 = 4",
        "filtered 40.0 needs 1 < 4",
        "filtered 0.0 needs 1 = 1",
    ]
    assert scaler.operators == 1


def test_decisions_with_guards() -> None:
    guards = [
        make_guard("hysteresis", band=0.1),
        make_guard("cooldown", up=10.0, down=30.0),
        make_guard("max_step", up=2),
    ]
    scaler = Scaler(make_filter("raw"), POLICY, guards, operators=2)
    samples = [(0.0, 90.0), (5.0, 260.0), (10.0, 260.0), (15.0, 260.0), (20.0, 230.0)]
    samples += [(30.0, 200.0), (45.0, 200.0), (50.0, 0.0), (75.0, 0.0)]
    decisions = run(scaler, samples)
    assert [d.operators for d in decisions] == [2, 4, 4, 6, 6, 6, 4, 4, 1]
    actions = ["none", "up", "none", "up", "none", "none", "down", "none", "down"]
    assert [d.action for d in decisions] == actions
    assert decisions[1].reason == (
        "filtered 260.0 needs 6 > 2; limited by max_step: at most +2 per decision"
    )
    assert decisions[2].reason == (
        "filtered 260.0 needs 6 > 4; held by cooldown: last scale-up 5 s ago < 10 s"
    )
    assert decisions[4].reason == (
        "filtered 230.0 needs 5 < 6; held by hysteresis: filtered 230.0 is not below 225.0 "
        "(band 0.1)"
    )
    assert decisions[5].reason == (
        "filtered 200.0 needs 4 < 6; held by cooldown: last scale-up 15 s ago < 30 s"
    )
    assert decisions[7].reason.endswith("held by cooldown: last scale-down 5 s ago < 30 s")


def test_decision_is_frozen_and_json_ready() -> None:
    decision = Scaler(make_filter("raw"), POLICY).observe(312.4, 7.5)
    assert json.loads(json.dumps(decision.to_dict())) == {
        "t": 7.5,
        "volume": 312.4,
        "filtered": 312.4,
        "previous": 1,
        "operators": 7,
        "action": "up",
        "reason": "filtered 312.4 needs 7 > 1",
        "backlog": None,
        "running": None,
        "processed": None,
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        decision.operators = 3  # type: ignore[misc]


def test_filtering_suppresses_a_spike() -> None:
    samples = [(float(t), 280.0) for t in range(20)] + [(20.0, 600.0)] + [(21.0, 280.0)]
    raw = run(Scaler(make_filter("raw"), POLICY, operators=6), samples)
    smooth = run(Scaler(make_filter("tvd", lam=400.0), POLICY, operators=6), samples)
    assert sum(d.action != "none" for d in raw) == 2
    assert all(d.action == "none" for d in smooth)


def test_bounds_are_hard_limits_over_guards_and_initial_operators() -> None:
    bounded = ThresholdPolicy(capacity=50.0, min_operators=3, max_operators=10)
    # 12 running, above max: hysteresis would hold 498 tuples/s at 12; the bound lowers it.
    scaler = Scaler(make_filter("raw"), bounded, [make_guard("hysteresis", band=0.1)], operators=12)
    decision = scaler.observe(498.0, 0.0)
    assert (decision.operators, decision.action) == (10, "down")
    assert decision.reason == (
        "filtered 498.0 needs 10 < 12; held by hysteresis: filtered 498.0 is not below 495.0 "
        "(band 0.1); lowered to max_operators=10"
    )
    # 1 running, below min, while a cooldown holds scale-ups: the bound raises it anyway.
    cooldown = make_guard("cooldown", up=60.0)
    cooldown.record(0, 1, -10.0, target=1)
    scaler = Scaler(make_filter("raw"), bounded, [cooldown], operators=1)
    decision = scaler.observe(0.0, 0.0)
    assert (decision.operators, decision.action) == (3, "up")
    assert decision.reason.endswith("; raised to min_operators=3")


def test_scale_to_zero_and_back() -> None:
    idle = ThresholdPolicy(capacity=50.0, min_operators=0)
    scaler = Scaler(make_filter("raw"), idle, operators=0)
    assert [d.operators for d in run(scaler, [(0.0, 0.0), (1.0, 20.0), (2.0, 0.0)])] == [0, 1, 0]


@pytest.mark.parametrize("bad", [-1, 1.5, True, None, "2"])
def test_initial_operators_must_be_a_count(bad: object) -> None:
    with pytest.raises(ValueError, match=rf"Scaler: operators={bad!r} is not allowed"):
        Scaler(make_filter("raw"), POLICY, operators=bad)  # type: ignore[arg-type]


def test_guards_must_be_guard_objects() -> None:
    with pytest.raises(ValueError, match=r"guards\[0\]=\{'name': 'cooldown'\} is not allowed"):
        Scaler(make_filter("raw"), POLICY, [{"name": "cooldown"}])  # type: ignore[list-item]


def test_invalid_samples_are_refused_and_change_nothing() -> None:
    volumes = noisy_volumes(80)
    scaler, twin = Scaler.from_spec(SPEC), Scaler.from_spec(SPEC)
    run(scaler, [(float(t), v) for t, v in enumerate(volumes[:40])])
    run(twin, [(float(t), v) for t, v in enumerate(volumes[:40])])
    before = json.dumps(scaler.state_dict())
    bad_calls = [
        ((float("nan"), 40.0), r"volume=nan is not allowed"),
        ((float("inf"), 40.0), r"volume=inf is not allowed"),
        ((-1.0, 40.0), r"volume=-1.0 is not allowed: volume must be a number >= 0"),
        (("300", 40.0), r"volume='300' is not allowed"),
        ((None, 40.0), r"volume=None is not allowed"),
        ((True, 40.0), r"volume=True is not allowed"),
        ((300.0, float("nan")), r"t=nan is not allowed"),
        ((300.0, 39.0), r"t=39.0 is not allowed: t must be greater than the previous t=39.0"),
        ((300.0, 12.0), r"t=12.0 is not allowed: .* previous t=39.0"),
        ((300.0, "40"), r"t='40' is not allowed"),
    ]
    for (volume, t), message in bad_calls:
        with pytest.raises(ValueError, match=message):
            scaler.observe(volume, t)  # type: ignore[arg-type]
        assert json.dumps(scaler.state_dict()) == before
    rest = [(float(t), v) for t, v in enumerate(volumes) if t >= 40]
    assert run(scaler, rest) == run(twin, rest)


@pytest.mark.parametrize("cut", [0, 1, 7, 150, 333])
def test_state_round_trip_through_json_continues_identically(cut: int) -> None:
    samples = [(0.5 * t, v) for t, v in enumerate(noisy_volumes())]
    original = Scaler.from_spec(SPEC, operators=4)
    first = run(original, samples[:cut])
    saved = json.loads(json.dumps(original.state_dict(), allow_nan=False))
    restored = Scaler.from_spec(json.loads(json.dumps(original.spec)))
    restored.load_state_dict(saved)
    assert restored.operators == original.operators
    continued = run(restored, samples[cut:])
    assert continued == run(original, samples[cut:])
    # the sequence really exercises the guards and scales both ways
    actions = {d.action for d in first + continued}
    reasons = " ".join(d.reason for d in first + continued)
    assert actions == {"up", "down", "none"}
    for guard in ("hysteresis", "cooldown", "stabilization", "max_step"):
        assert f"by {guard}" in reasons


def test_state_from_another_configuration_or_malformed_is_refused_and_changes_nothing() -> None:
    samples = [(float(t), v) for t, v in enumerate(noisy_volumes(200))]
    scaler, ahead = Scaler.from_spec(SPEC), Scaler.from_spec(SPEC)
    run(scaler, samples[:50])
    run(ahead, samples[:120])
    before = json.dumps(scaler.state_dict())

    other_lam = Scaler.from_spec({**SPEC, "filter": {"name": "tvd", "lam": 41.0}}).state_dict()
    reordered = Scaler.from_spec({**SPEC, "guards": ALL_GUARDS[::-1]}).state_dict()
    # A valid filter state from further on, with the last guard's state broken: the filter
    # must not be loaded either.
    broken_guard = json.loads(json.dumps(ahead.state_dict()))
    broken_guard["guards"][-2]["state"]["_recent"] = [[1.0, 2], [2.0, 5]]
    bad_operators = {**ahead.state_dict(), "operators": -1}
    bad_t = {**ahead.state_dict(), "t": "later"}
    missing = {key: value for key, value in ahead.state_dict().items() if key != "t"}
    for state, message in [
        (other_lam, "state was taken from"),
        (reordered, "state was taken from"),
        (broken_guard, "recommendations must decrease"),
        (bad_operators, "operators=-1 is not allowed"),
        (bad_t, "t='later' is not allowed"),
        (missing, "state must be a dict with the keys"),
    ]:
        with pytest.raises(ValueError, match=message):
            scaler.load_state_dict(state)
        assert json.dumps(scaler.state_dict()) == before


@pytest.mark.parametrize("origin", [-1e9, 1.7e9, 1e12])
def test_only_differences_of_t_matter(origin: float) -> None:
    """Any origin, far past or future, and non-integer steps give the same decisions."""
    guards = [
        {"name": "cooldown", "up": 2.0, "down": 5.0},
        {"name": "stabilization", "window": 3.0},
    ]
    spec = {**SPEC, "filter": {"name": "tvd", "lam": 60.0}, "guards": guards}
    volumes = noisy_volumes(400)
    at_zero = run(Scaler.from_spec(spec), [(0.25 * i, v) for i, v in enumerate(volumes)])
    shifted = run(Scaler.from_spec(spec), [(origin + 0.25 * i, v) for i, v in enumerate(volumes)])
    assert [dataclasses.replace(d, t=0.0) for d in shifted] == [
        dataclasses.replace(d, t=0.0) for d in at_zero
    ]
    reasons = " ".join(d.reason for d in at_zero)
    assert "by cooldown" in reasons and "by stabilization" in reasons


def test_cooldown_counts_seconds_not_samples() -> None:
    volumes = [300.0, 100.0, 100.0, 100.0, 100.0]
    counts = {}
    for step in (2.0, 0.5):
        scaler = Scaler(make_filter("raw"), POLICY, [make_guard("cooldown", down=4.0)], operators=4)
        counts[step] = [
            d.operators for d in run(scaler, [(step * i, v) for i, v in enumerate(volumes)])
        ]
    assert counts == {2.0: [6, 6, 2, 2, 2], 0.5: [6, 6, 6, 6, 6]}


def test_spec_round_trips_through_json() -> None:
    scaler = Scaler.from_spec(SPEC, operators=3)
    assert scaler.spec == {
        "filter": make_filter("tvd", lam=40.0).spec,
        "policy": {"capacity": 50.0, "min_operators": 1, "max_operators": None},
        "guards": [make_guard(guard).spec for guard in ALL_GUARDS],
    }
    assert Scaler.from_spec(json.loads(json.dumps(scaler.spec))).spec == scaler.spec
    assert Scaler.from_spec({"filter": "raw", "policy": {"capacity": 10}}).spec["guards"] == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"filter": "raw"}, "spec must be a dict with the key 'policy'"),
        ({**SPEC, "window": 3}, "spec must be a dict with the key 'policy'"),
        ({**SPEC, "policy": [50.0]}, "policy=\\[50.0\\] is not allowed: policy must be a dict"),
        ({**SPEC, "policy": {"capacity": 50.0, "cap": 3}}, "policy.cap=3 is not allowed"),
        ({**SPEC, "policy": {}}, "policy.capacity=None is not allowed: capacity is required"),
        ({**SPEC, "policy": {"capacity": -1.0}}, "capacity=-1.0 is not allowed"),
        ({**SPEC, "guards": [{"name": "delay"}]}, "name='delay' is not a guard"),
        ({**SPEC, "guards": {"name": "cooldown"}}, "guards must be a list"),
        ({**SPEC, "filter": {"name": "tvd", "lam": -1.0}}, "lam=-1.0 is not allowed"),
    ],
)
def test_bad_specs_are_refused_with_a_clear_message(spec: dict[str, object], message: str) -> None:
    with pytest.raises(ParameterError, match=message) as error:
        Scaler.from_spec(spec)
    assert error.value.param in message  # the service points at the field without the text


def test_backlog_is_drained_over_the_catch_up_time_with_utilisation_headroom() -> None:
    policy = ThresholdPolicy(capacity=50.0, utilisation=0.8, catch_up=60.0, quiet=0.0, restart=0)
    scaler = Scaler(make_filter("raw"), policy, operators=6)
    plain = scaler.observe(300.0, 0.0)
    assert plain.operators == 8  # 300 / 0.8 = 375 tuples/s
    behind = scaler.observe(300.0, 1.0, backlog=2400.0)  # + 40 tuples/s for a minute
    assert behind.operators == 9 and behind.backlog == 2400.0
    assert behind.reason.startswith(
        "demand 425.0 (filtered 300.0 + backlog 2400 / 60 s, at utilisation 0.8) needs 9 > 8"
    )
    # By default a backlog is drained over 300 s; with catch_up=None it is only reported.
    # (The first sample of a queue starts its quiet period, as a restart does: see test_queue.)
    # (No restart is assumed here, so that the scale-up is not sized for one: see test_queue.)
    default = Scaler(make_filter("raw"), ThresholdPolicy(50.0, restart=0.0), operators=6)
    assert default.observe(300.0, -60.0, backlog=0.0).operators == 6
    assert default.observe(300.0, 0.0, backlog=3000.0).operators == 7  # 300 + 10 tuples/s
    ignoring = Scaler(make_filter("raw"), ThresholdPolicy(50.0, catch_up=None), operators=6)
    assert ignoring.observe(300.0, -60.0, backlog=0.0).operators == 6
    assert ignoring.observe(300.0, 0.0, backlog=1e6).operators == 6


def test_decisions_reason_from_the_count_actually_running() -> None:
    scaler = Scaler(make_filter("raw"), POLICY, [make_guard("cooldown", down=60.0)], operators=4)
    assert scaler.observe(300.0, 0.0).operators == 6  # decided 6 ...
    # ... but the resize failed: 4 still run, so 6 is asked again, as a scale-up from 4.
    again = scaler.observe(300.0, 1.0, running=4)
    assert (again.previous, again.operators, again.action, again.running) == (4, 6, "up", 4)
    # A manual change to 9 is the count the next decision starts from.
    held = scaler.observe(300.0, 2.0, running=9)
    assert (held.previous, held.operators) == (9, 9)
    assert "held by cooldown" in held.reason


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("backlog", -1.0, "backlog=-1.0 is not allowed: backlog must be a number >= 0"),
        ("backlog", float("inf"), "backlog=inf is not allowed"),
        ("processed", float("nan"), "processed=nan is not allowed"),
        ("running", 2.5, "running=2.5 is not allowed: running must be an integer >= 0"),
        ("running", -1, "running=-1 is not allowed"),
    ],
)
def test_bad_reports_are_refused_and_change_nothing(field: str, value: float, message: str) -> None:
    scaler = Scaler(make_filter("ewma", alpha=0.5), POLICY, operators=2)
    scaler.observe(100.0, 0.0)
    before = json.dumps(scaler.state_dict())
    with pytest.raises(ValueError, match=message):
        scaler.observe(200.0, 1.0, **{field: value})  # type: ignore[arg-type]
    assert json.dumps(scaler.state_dict()) == before


def test_a_backlog_right_after_a_scaling_operation_is_ignored_for_the_quiet_period() -> None:
    # No look-ahead: the jump from 300 to 350 would otherwise read as a ramp.
    policy = ThresholdPolicy(capacity=50.0, catch_up=60.0, quiet=30.0, lead=0.0, restart=0.0)
    scaler = Scaler(make_filter("raw"), policy, operators=6)
    assert scaler.observe(300.0, 0.0, backlog=0.0).operators == 6
    assert scaler.observe(350.0, 10.0, backlog=0.0).operators == 7  # a change at t = 10
    # The restart piled up a backlog: ignored until t = 40, acted on from then.
    assert scaler.observe(350.0, 20.0, backlog=2400.0).operators == 7
    assert scaler.observe(350.0, 39.0, backlog=2400.0).operators == 7
    assert scaler.observe(350.0, 40.0, backlog=2400.0).operators == 8  # 350 + 40 tuples/s
    # A change of the running count made elsewhere starts a quiet period too: no scale-down
    # during it either, since the backlog it piles up is not acted on.
    manual = scaler.observe(350.0, 100.0, backlog=2400.0, running=10)
    assert (manual.previous, manual.operators) == (10, 10)
    assert "held: 0 s after a scaling operation or the first sample < quiet 30 s" in manual.reason
    # Without a backlog report the quiet period does nothing: volume-only streams are unchanged.
    assert scaler.observe(350.0, 101.0).operators == 7
    state = json.loads(json.dumps(scaler.state_dict()))
    assert state["changed_at"] == 101.0
    old = {key: value for key, value in state.items() if key != "changed_at"}
    restored = Scaler(make_filter("raw"), policy)
    restored.load_state_dict(old)  # saved before changed_at existed: loads as "no change"
    assert restored.observe(350.0, 102.0, backlog=2400.0).operators == 8


def test_a_job_reporting_its_backlog_is_sized_ahead_of_a_ramp() -> None:
    # Only a job that reports its backlog is sized as a queue: a volume-only stream keeps the
    # paper's threshold on the same ramp.
    policy = ThresholdPolicy(capacity=50.0, lead=30.0, latency=None, quiet=0.0, restart=0.0)
    ramp = [(float(t), 300.0 + 2.0 * t) for t in range(121)]  # 2 tuples/s per second
    queue = Scaler(make_filter("raw"), policy, operators=6)
    volume_only = Scaler(make_filter("raw"), policy, operators=6)
    for t, volume in ramp:
        ahead = queue.observe(volume, t, backlog=0.0)
        plain = volume_only.observe(volume, t)
    assert plain.operators == 11  # ceil(540 / 50)
    # The slope, smoothed over a minute, is 2 x (1 - e^-2) after two: 540 + 1.73 x 30 = 592.
    assert ahead.operators == 12
    assert "slope 1.73/s x 30 s" in ahead.reason
    # A falling level is not looked ahead along: a scale-down waits for the level itself.
    for t in range(121, 180):
        ahead = queue.observe(540.0 - 2.0 * (t - 120), float(t), backlog=0.0)
    assert ahead.operators == math.ceil((540.0 - 2.0 * 59) / 50.0)
    assert "slope" not in ahead.reason


def test_headroom_grows_with_the_noise_and_covers_the_measured_restart() -> None:
    # No restart assumed until one is measured (the default assumes 8 s: see test_queue).
    policy = ThresholdPolicy(capacity=50.0, lead=0.0, catch_up=None, quiet=30.0, restart=0.0)
    rng = np.random.default_rng(3)
    quiet = Scaler(make_filter("changepoint", resolution=50.0), policy, operators=8)
    noisy = Scaler(make_filter("changepoint", resolution=50.0), policy, operators=8)
    for t in range(300):
        calm = quiet.observe(380.0 + rng.normal(0.0, 10.0), float(t), backlog=0.0)
        loud = noisy.observe(max(0.0, 380.0 + rng.normal(0.0, 150.0)), float(t), backlog=0.0)
    # sigma 10: h = 0.1 tuples/s; sigma 150: h = 19.5 = the root of 10 h^2 + 3800 h =
    # 150^2 ln(1000) / 2. Both estimates come from the filter's own noise estimate.
    assert calm.operators == 8 and "headroom 0.1" in calm.reason
    found = re.search(r"headroom ([0-9.]+) \(noise ([0-9.]+)", loud.reason)
    assert found is not None and loud.operators == 9, loud.reason
    headroom, noise = float(found[1]), float(found[2])
    assert 120.0 < noise < 180.0  # the filter's estimate of 150
    assert headroom == pytest.approx(policy.headroom(loud.filtered, noise), abs=0.1)
    assert policy.headroom(380.0, 150.0) == pytest.approx(19.45, abs=0.01)
    # A restart is measured from what the job reports: after a scaling operation it had work
    # waiting and processed nothing for 8 s. The headroom then also drains that restart's
    # backlog before the noise takes the delay over 10 s.
    scaler = Scaler(make_filter("raw"), policy, operators=8)
    assert scaler.observe(420.0, 0.0, backlog=0.0, running=8, processed=380.0).operators == 9
    for t in range(1, 9):
        scaler.observe(420.0, float(t), backlog=420.0 * t, running=9, processed=0.0)
    scaler.observe(420.0, 9.0, backlog=3300.0, running=9, processed=450.0)
    assert scaler.state_dict()["restart"] == 8.0  # the last second without processing
    assert policy.headroom(420.0, 0.0, 8.0) == 0.0  # no noise, and 8 s < 10 s: no headroom
    assert policy.headroom(420.0, 100.0, 8.0) > 3.0 * policy.headroom(420.0, 100.0)  # 30 vs 8


def test_the_queue_state_round_trips_and_old_states_load() -> None:
    policy = ThresholdPolicy(capacity=50.0)
    scaler = Scaler(make_filter("raw"), policy, operators=8)
    for t in range(30):
        scaler.observe(400.0 + 3.0 * t, float(t), backlog=100.0, running=8, processed=400.0)
    state = json.loads(json.dumps(scaler.state_dict()))
    assert state["slope"] > 0.0 and state["filtered"] == 487.0
    restored = Scaler(make_filter("raw"), policy, operators=8)
    restored.load_state_dict(state)
    assert restored.observe(600.0, 30.0, backlog=0.0) == scaler.observe(600.0, 30.0, backlog=0.0)
    old = {key: state[key] for key in ("spec", "filter", "guards", "operators", "t")}
    fresh = Scaler(make_filter("raw"), policy, operators=8)
    fresh.load_state_dict(old)  # saved before the queue fields existed
    assert fresh.state_dict()["slope"] == 0.0 and fresh.state_dict()["restart"] is None
    with pytest.raises(ValueError, match="restart=-1.0 is not allowed"):
        fresh.load_state_dict({**state, "restart": -1.0})
    with pytest.raises(ValueError, match="started_at='0' is not allowed"):
        fresh.load_state_dict({**state, "started_at": "0"})
    assert state["running"] == 8 and fresh.state_dict()["running"] is None
    with pytest.raises(ValueError, match="running=-2 is not allowed"):
        fresh.load_state_dict({**state, "running": -2})
    # The volumes since the last decision changed the count (at t = 1, to 9).
    count = state["volume_count"]
    assert count == 28 and state["volume_sum"] == sum(400.0 + 3.0 * t for t in range(2, 30))
    assert fresh.state_dict()["volume_count"] == 0 and fresh.state_dict()["volume_sum"] == 0.0
    for field, bad in (("volume_count", 1.5), ("volume_count", None), ("volume_sum", -1.0)):
        with pytest.raises(ValueError, match=f"{field}={bad!r} is not allowed"):
            fresh.load_state_dict({**state, field: bad})
    unmeasured = Scaler(make_filter("raw"), policy, operators=8)
    unmeasured.observe(400.0, 0.0, backlog=0.0)
    saved = json.loads(json.dumps(unmeasured.state_dict()))
    assert saved["restart"] is None and saved["started_at"] == 0.0
    fresh.load_state_dict(saved)
    assert fresh.state_dict() == saved
    with pytest.raises(ValueError, match="state must be a dict with the keys"):
        fresh.load_state_dict({**state, "unknown": 1})


def test_a_scale_up_serves_the_backlog_it_finds_and_its_restarts_within_the_latency() -> None:
    policy = ThresholdPolicy(capacity=50.0, lead=0.0, catch_up=None, quiet=30.0)
    scaler = Scaler(make_filter("raw"), policy, operators=8)
    # A restart of 8 s measured on a first operation (work waiting, nothing processed).
    scaler.observe(420.0, 0.0, backlog=0.0, running=8, processed=400.0)
    for t in range(1, 9):
        scaler.observe(420.0, float(t), backlog=420.0 * t, running=9, processed=0.0)
    # Much later the level steps to 500 with 1,200 tuples waiting: the level alone needs 10;
    # the scale-up is made 12, whose 600 tuples/s drain them in the 2 s an 8 s restart leaves
    # of the 10 s latency.
    for t in range(9, 200):
        scaler.observe(420.0, float(t), backlog=0.0, running=9, processed=420.0)
    up = scaler.observe(500.0, 200.0, backlog=1200.0, running=9, processed=450.0)
    assert up.operators == 12
    assert "raised to 12: backlog 1200 + restart 8 s x 500.0 served within 10 s" in up.reason
    # The same backlog does not start a scale-up on its own (catch_up=None: only the level).
    steady = Scaler(make_filter("raw"), policy, operators=9)
    assert steady.observe(420.0, 0.0, backlog=3000.0).operators == 9


def test_a_scale_down_at_the_end_of_a_ramp_is_sized_on_the_volume_since_the_last_change() -> None:
    # A filter that lags a ramp (an EWMA of alpha 0.01 follows one 100 samples late): the
    # arrivals rise from 300 to 479 tuples/s, an operation lands (10 -> 12 running) and they
    # hold at 480. Once the quiet period is over the level reads 419 (9 operators); sized on
    # it, the scale-down would leave 450 tuples/s for 480. Sized on the mean since
    # the count changed (480, the level still rising), it goes to 10.
    policy = ThresholdPolicy(capacity=50.0, quiet=30.0, catch_up=None)
    scaler = Scaler(make_filter("ewma", alpha=0.01), policy, operators=10)
    for t in range(180):
        scaler.observe(300.0 + t, float(t), backlog=0.0, running=10, processed=300.0 + t)
    decisions = [
        scaler.observe(480.0, float(t), backlog=0.0, running=12, processed=480.0)
        for t in range(180, 211)
    ]
    down = decisions[-1]
    assert [d.operators for d in decisions[:-1]] == [12] * 30 and down.operators == 10
    assert down.filtered < 450.0
    assert "sized on the mean 480.0 since the count changed: rising" in down.reason
    # The mean counts only the samples since the change (reset by the decision as well).
    assert scaler.state_dict()["volume_count"] == 0
    # Falling, the mean since the change (500) reads above the level (400) and plays no part.
    falling = Scaler(make_filter("raw"), policy, operators=12)
    falling.observe(600.0, 0.0, backlog=0.0, running=12, processed=600.0)
    down = falling.observe(400.0, 100.0, backlog=0.0, running=12, processed=400.0)
    assert down.operators == 8 and "sized on the mean" not in down.reason


def test_the_actuation_delay_is_measured_and_a_scale_up_sized_for_the_backlog_at_landing() -> None:
    policy = ThresholdPolicy(capacity=50.0, catch_up=None, restart=0.0)
    scaler = Scaler(make_filter("raw"), policy, operators=8)
    scaler.observe(400.0, 0.0, backlog=0.0, running=8, processed=400.0)
    assert scaler.observe(440.0, 100.0, backlog=0.0, running=8, processed=400.0).operators == 9
    # The job runs 9 only 30 s later: the delay is dated from the last sample without it.
    for t in range(101, 130):
        scaler.observe(440.0, float(t), backlog=40.0 * (t - 100), running=8, processed=400.0)
    scaler.observe(440.0, 130.0, backlog=1160.0, running=9, processed=450.0)
    for t in range(131, 300):
        scaler.observe(440.0, float(t), backlog=0.0, running=9, processed=440.0)
    state = json.loads(json.dumps(scaler.state_dict()))
    assert state["actuation"] == 29.0 and state["restart"] == 0.0
    # 600 arrive with 9 running (450/s short by 150) and 3,000 waiting: the scale-up lands on
    # 3,000 + 29 x 150 = 7,350 tuples, which the 10 s latency (no restart) drains at 735/s:
    # 15 operators. Sized for the 3,000 waiting now, 300/s, the level's 600/s would need 12.
    up = scaler.observe(600.0, 300.0, backlog=3000.0, running=9, processed=450.0)
    assert "backlog 7350 when it lands in 29 s" in up.reason and up.operators == 15
    unmeasured = Scaler(make_filter("raw"), policy, operators=8)
    unmeasured.load_state_dict({**state, "actuation": None})
    assert unmeasured.observe(600.0, 300.0, backlog=3000.0, running=9).operators == 12
    with pytest.raises(ValueError, match="actuation=-1.0 is not allowed"):
        unmeasured.load_state_dict({**state, "actuation": -1.0})
    # A count that lands after the quiet period was not this decision's: nothing measured.
    late = Scaler(make_filter("raw"), policy, operators=8)
    late.observe(440.0, 0.0, backlog=0.0, running=8, processed=400.0)
    late.observe(440.0, 100.0, backlog=0.0, running=8, processed=400.0)
    late.observe(440.0, 200.0, backlog=0.0, running=9, processed=440.0)
    assert late.state_dict()["actuation"] is None


def test_samples_a_denormal_time_apart_leave_the_state_finite() -> None:
    # Found by the service's schemathesis run: 2e-313 s after the previous sample, the slope's
    # weight is 0 and the difference quotient infinite; 0 x inf made the slope NaN, a state the
    # service cannot store (it refused a valid request with a 422).
    scaler = Scaler.from_spec({"policy": {"capacity": 50.0}})
    scaler.observe(80.0, -2.2250738585e-313, backlog=0.0)
    scaler.observe(883541810987.0, 0.0, backlog=0.0)
    scaler.observe(400.0, 1.0, backlog=0.0)
    json.dumps(scaler.state_dict(), allow_nan=False)  # raises on NaN or infinity
    assert math.isfinite(scaler.state_dict()["slope"])


@pytest.mark.parametrize("weight", [0.0, 0.25, 1.0])
def test_a_volume_right_after_a_scaling_operation_counts_for_the_quiet_weight(
    weight: float,
) -> None:
    # A rate the job measures itself can read a burst right after a restart (a source reading
    # what piled up); within the quiet period it counts for quiet_weight, volume-only too.
    policy = ThresholdPolicy(capacity=50.0, quiet=30.0, quiet_weight=weight)
    scaler = Scaler(make_filter("raw"), policy, operators=6)
    assert scaler.observe(300.0, 0.0).filtered == 300.0  # the first sample: taken whole
    assert scaler.observe(290.0, 5.0).filtered == 290.0  # no operation yet: taken whole
    assert scaler.observe(350.0, 10.0).operators == 7  # an operation at t = 10
    burst = scaler.observe(1100.0, 15.0)
    assert burst.filtered == pytest.approx(350.0 + weight * 750.0)
    assert burst.operators == policy.needed(burst.filtered)
    restored = Scaler(make_filter("raw"), policy)
    restored.load_state_dict(json.loads(json.dumps(scaler.state_dict())))
    # Within the quiet period: the restored Scaler weighs a sample as the original would.
    later = restored.observe(700.0, 24.0)
    assert later.filtered == pytest.approx(burst.filtered + weight * (700.0 - burst.filtered))
    over = restored.state_dict()["changed_at"] + 30.0
    assert restored.observe(640.0, over).filtered == 640.0  # 30 s on: the sample itself


def test_an_ignored_volume_holds_the_level_and_its_slope_decays() -> None:
    policy = ThresholdPolicy(capacity=50.0, quiet=30.0, quiet_weight=0.0)
    scaler = Scaler(make_filter("raw"), policy, operators=6)
    for t, volume in [(0.0, 300.0), (10.0, 300.0), (20.0, 400.0)]:  # an operation at t = 20
        scaler.observe(volume, t)
    slope = scaler.state_dict()["slope"]
    assert slope > 0.0 and scaler.state_dict()["changed_at"] == 20.0
    held = scaler.observe(5000.0, 21.0)
    assert (held.filtered, held.operators) == (400.0, 8)  # the level at t = 20
    assert 0.0 < scaler.state_dict()["slope"] < slope  # the level did not rise in that second
