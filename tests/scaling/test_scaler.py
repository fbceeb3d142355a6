"""The Scaler: decisions on hand-built sequences, refusal of bad input and specs (its state:
test_scaler_state.py; a stage reporting its backlog: test_scaler_backlog.py)."""

from __future__ import annotations

import dataclasses
import json
import math

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


@pytest.mark.parametrize("backlog", [None, 0.0])
def test_a_guarded_operation_is_not_undone_while_it_lands(backlog: float | None) -> None:
    # Found in session 20: with the running count reported, a scale-down the cooldown let
    # through was judged again at the next sample against the count still running, as a new
    # scale-down within the cooldown, and the target went back: 1, 3, 3, ... while the
    # executors being removed still ran (an adaptor would have added them back).
    cooldown, window = make_guard("cooldown", down=60.0), make_guard("stabilization", window=9.0)
    policy = ThresholdPolicy(capacity=100.0, max_operators=5, restart=0.0)
    scaler = Scaler(make_filter("raw"), policy, [cooldown, window], operators=3)
    volume = 100.0 if backlog is None else 60.0
    decisions = [
        scaler.observe(volume, float(t), backlog=backlog, running=3 if t < 5 else 1)
        for t in range(8)
    ]
    assert decisions[0].operators == 1 and decisions[0].code == "ScaledDown"
    assert [d.operators for d in decisions] == [1] * 8
    assert [d.code for d in decisions[1:5]] == ["WaitingToLand"] * 4
    assert all("cooldown" not in d.reason for d in decisions)
    # The operation was told to the guards once: the cooldown dates it at t = 0; the window
    # heard every recommendation, the last at t = 7.
    assert cooldown.state_dict()["state"]["_last_down"] == 0.0
    assert window.state_dict()["state"]["_recent"][-1] == [7.0, 1]
    # A new operation within the cooldown is still held: up is free, down is not.
    assert scaler.observe(250.0, 8.0, backlog=backlog, running=1).operators == 3
    held = scaler.observe(volume, 9.0, backlog=backlog, running=3)
    assert held.operators == 3 and "held by cooldown" in held.reason


def test_an_operation_that_lands_in_parts_is_not_undone_by_a_guard() -> None:
    # Pods and executors come up one by one: with 5 of a decided 6 running, the part was taken
    # for a count nobody decided, the sixth judged again as a new scale-up within the cooldown
    # and held at 5 (an adaptor would have cancelled it). Session 28.
    cooldown = make_guard("cooldown", up=60.0, down=60.0)
    scaler = Scaler(make_filter("raw"), POLICY, [cooldown], operators=2)
    assert scaler.observe(100.0, 0.0, running=2).operators == 2
    assert scaler.observe(300.0, 10.0, running=2).code == "ScaledUp"
    part = scaler.observe(300.0, 20.0, running=5)
    assert (part.previous, part.operators, part.code) == (5, 6, "WaitingToLand"), part.reason
    assert "cooldown" not in part.reason
    assert scaler.observe(300.0, 25.0, running=6).code == "Steady"
    assert cooldown.state_dict()["state"]["_last_up"] == 10.0  # told once


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
