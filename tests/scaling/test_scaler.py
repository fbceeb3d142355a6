"""The Scaler: decisions on hand-built sequences, refusal of bad input, state and specs."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from filters import make_filter
from filters.base import ParameterError
from scaling import Decision, Scaler, ThresholdPolicy, make_guard
from scaling.measure import level_error

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
        "code": "ScaledUp",
        "explain": {
            "model": "threshold",
            "inputs": {"filtered": 312.4, "spread": None},
            "needed": 7,
        },
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


# A stage that reports its backlog: the cost model (tests/scaling/test_cost.py, test_choice.py).
SURGE = (520.0, 2000.0)  # 520/s arriving, 2,000 waiting: 8 operators (400/s) fall behind


def cost_rows(decision: Decision) -> dict[int, dict[str, float]]:
    assert decision.explain is not None and decision.explain["model"] == "cost"
    return {row["operators"]: row for row in decision.explain["candidates"]}


def assert_reason_is_true(decision: Decision) -> None:
    """The prose names the chosen count's expected cost and each neighbour's, as explain has
    them, and compares no two numbers wrongly (it compares none: "a < b < c" would also have
    compared the two neighbours)."""
    rows = cost_rows(decision)
    chosen = rows[decision.operators]
    head = f"{decision.operators}: expected cost {chosen['total']:.0f} "
    assert decision.reason.startswith(head + f"({chosen['late_seconds']:.1f} late s)")
    for count, row in rows.items():
        if count != decision.operators:
            named = f"{count} would cost {row['total']:.0f} ({row['late_seconds']:.1f} late s)"
            assert named in decision.reason
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
    scaler = Scaler(make_filter("raw"), POLICY, operators=8)
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
    capped = ThresholdPolicy(capacity=50.0, max_operators=12)
    decision = Scaler(make_filter("raw"), capped, operators=8).observe(520.0, 0.0, backlog=2000.0)
    assert (decision.operators, decision.code) == (12, "LimitedByBound")
    assert decision.explain is not None and decision.explain["unbounded"] == 32
    assert decision.reason.endswith("; 32 is cheapest, limited by max_operators")
    assert_reason_is_true(decision)
    floor = ThresholdPolicy(capacity=50.0, min_operators=20)
    raised = Scaler(make_filter("raw"), floor, operators=10).observe(380.0, 0.0, backlog=0.0)
    # Holding 10 is cheapest but below the bound: the cheapest operation within it, 23 (more
    # than 20 serve the backlog the 20 s restart piles up sooner).
    assert (raised.operators, raised.code) == (23, "LimitedByBound")
    assert raised.reason.endswith("; 10 is cheapest, limited by min_operators")
    assert_reason_is_true(raised)


def test_limited_by_guard_with_a_cooldown() -> None:
    guards = [make_guard("cooldown", up=60.0)]
    scaler = Scaler(make_filter("raw"), POLICY, guards, operators=8)
    first = scaler.observe(520.0, 0.0, backlog=2000.0)
    assert (first.operators, first.code) == (32, "ScaledUp")
    # 10 s later the cost model wants more than 32, the cooldown holds it.
    second = scaler.observe(2000.0, 10.0, backlog=30000.0)
    assert cost_rows(second) and second.explain["unbounded"] > 32  # type: ignore[index]
    assert (second.operators, second.code) == (32, "LimitedByGuard")
    assert "held by cooldown: last scale-up 10 s ago < 60 s" in second.reason


def test_waiting_to_land_while_the_running_count_lags_the_decision() -> None:
    scaler = Scaler(make_filter("raw"), POLICY, operators=8)
    decided = scaler.observe(520.0, 0.0, backlog=2000.0, running=8)
    assert (decided.operators, decided.code) == (32, "ScaledUp")
    for t in (1.0, 2.0):  # still 8 running: the decided 32 is asked for again
        waiting = scaler.observe(520.0, t, backlog=2000.0, running=8)
        assert (waiting.previous, waiting.operators, waiting.code) == (8, 32, "WaitingToLand")
        assert waiting.action == "up"
    assert scaler.state_dict()["decided_at"] == 0.0
    landed = scaler.observe(520.0, 3.0, backlog=2000.0, running=32)
    assert landed.code != "WaitingToLand" and scaler.state_dict()["decided_at"] is None
    assert scaler.state_dict()["actuations"] == [[3.0, 2.0]]  # landed between 2 and 3


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


def test_the_measured_restart_and_actuation_delay_enter_the_outlook() -> None:
    scaler = Scaler(make_filter("raw"), POLICY, operators=8)
    scaler.observe(400.0, 0.0, backlog=0.0, running=8, processed=400.0)
    up = scaler.observe(440.0, 100.0, backlog=1000.0, running=8, processed=400.0)
    assert up.operators > 8
    for t in range(101, 130):  # the job runs the new count only 30 s later
        waiting = scaler.observe(440.0, float(t), backlog=1000.0, running=8)
        assert (waiting.operators, waiting.code) == (up.operators, "WaitingToLand")
    n = up.operators
    # Landed between 129 and 130 (dated 129); work waiting and nothing processed to 135: 6 s.
    for t in range(130, 136):
        scaler.observe(440.0, float(t), backlog=3000.0, running=n, processed=0.0)
    done = scaler.observe(440.0, 136.0, backlog=1000.0, running=n, processed=n * 50.0)
    state = json.loads(json.dumps(scaler.state_dict()))
    assert state["actuations"] == [[130.0, 29.0]] and state["restarts"] == [[136.0, 6.0]]
    inputs = done.explain["inputs"]  # type: ignore[index]
    assert (inputs["landing"], inputs["restart"]) == (29.0, 6.0)
    assert "restart 6 s" in done.reason


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


def test_the_state_round_trips_exactly_with_the_new_fields() -> None:
    scaler = Scaler.from_spec({"policy": {"capacity": 50.0}}, operators=8)
    rng = np.random.default_rng(7)
    samples = [(float(t), 420.0 + rng.normal(0.0, 30.0)) for t in range(80)]
    for t, volume in samples[:40]:
        running = 8 if t < 20 else scaler.operators
        scaler.observe(volume, t, backlog=100.0 * (t % 7), running=running, processed=400.0)
    saved = json.loads(json.dumps(scaler.state_dict(), allow_nan=False))
    for field in ("slope", "excess", "missed", "decided_at", "changed_at", "restarts"):
        assert field in saved
    restored = Scaler.from_spec({"policy": {"capacity": 50.0}})
    restored.load_state_dict(saved)
    assert restored.state_dict() == scaler.state_dict()
    for t, volume in samples[40:]:
        a = scaler.observe(volume, t, backlog=50.0, running=scaler.operators, processed=400.0)
        b = restored.observe(volume, t, backlog=50.0, running=restored.operators, processed=400.0)
        assert a == b
    with pytest.raises(ValueError, match="restarts"):
        restored.load_state_dict({**saved, "restarts": [[1.0]]})
    with pytest.raises(ValueError, match="actuations=-1.0 is not allowed"):
        restored.load_state_dict({**saved, "actuations": [[1.0, -1.0]]})


def test_a_state_saved_before_the_cost_model_loads_and_keeps_deciding() -> None:
    old_spec = {
        "filter": {"name": "raw"},
        "policy": {"capacity": 50.0, "min_operators": 1, "max_operators": None},
        "guards": [],
    }
    old_spec["policy"] |= {"risk": 0.01, "quiet": 30.0, "catch_up": 300.0}
    old_state = {
        "spec": old_spec,
        "filter": {"spec": {"name": "raw"}, "state": {}},
        "guards": [],
        "operators": 9,
        "t": 100.0,
        "slope": 0.0,
        "restart": 12.0,
        "actuation": 30.0,
        "started_at": 0.0,
        "volume_sum": 4000.0,
        "volume_count": 10,
    }
    scaler = Scaler.from_spec(old_spec)
    assert scaler.spec["policy"] == {
        "capacity": 50.0,
        "min_operators": 1,
        "max_operators": None,
        "late_probability": 0.01,
    }
    scaler.load_state_dict(json.loads(json.dumps(old_state)))
    state = scaler.state_dict()
    # The longest restart and delay measured become one measurement each, at the state's t.
    assert state["restarts"] == [[100.0, 12.0]] and state["actuations"] == [[100.0, 30.0]]
    for gone in ("restart", "actuation", "started_at", "volume_sum", "volume_count"):
        assert gone not in state
    decision = scaler.observe(430.0, 101.0, backlog=500.0, running=9)
    assert (decision.previous, decision.operators) == (9, 9)
    inputs = decision.explain["inputs"]  # type: ignore[index]
    assert (inputs["restart"], inputs["landing"]) == (12.0, 30.0)
    assert decision.explain["prices"]["late_probability"] == 0.01  # type: ignore[index]
    assert_reason_is_true(decision)
    with pytest.raises(ValueError, match="restart=-1.0 is not allowed"):
        scaler.load_state_dict({**old_state, "restart": -1.0})
