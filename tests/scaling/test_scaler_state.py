"""The Scaler's state: through JSON and back, refused when it is not this Scaler's, and
states saved before the cost model still loading and deciding."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scaling import Scaler
from tests.scaling.test_scaler import ALL_GUARDS, SPEC, noisy_volumes, run
from tests.scaling.test_scaler_backlog import assert_reason_is_true


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
    for field in ("wander", "late_since", "late_now", "lates"):  # the correction's (issue 30)
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
    for field, bad, message in [
        ("wander", -1.0, "wander=-1.0 is not allowed"),
        ("late_now", "x", "late_now='x' is not allowed"),
        ("late_since", float("nan"), "late_since=nan is not allowed"),
        ("lates", [[1.0, 2.0, 3.0]], "lates"),
    ]:
        with pytest.raises(ValueError, match=message):
            restored.load_state_dict({**saved, field: bad})
    assert restored.state_dict() == scaler.state_dict()
    # A state from before them loads as none measured: no wander, no late seconds counted.
    later = {"wander", "late_since", "late_now", "lates"}
    earlier = {key: value for key, value in saved.items() if key not in later}
    restored.load_state_dict(earlier)
    state = restored.state_dict()
    assert (state["wander"], state["late_since"], state["late_now"], state["lates"]) == (
        0.0,
        None,
        0.0,
        [],
    )


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


def test_a_state_saved_before_restarts_had_a_direction_plans_both_with_them() -> None:
    spec = {"filter": {"name": "raw"}, "policy": {"capacity": 50.0}, "guards": []}
    spec = Scaler.from_spec(spec).spec
    before = {
        "spec": spec,
        "filter": {"spec": {"name": "raw"}, "state": {}},
        "guards": [],
        "operators": 9,
        "t": 100.0,
        "running": 9,
        "restarts": [[60.0, 12.0], [80.0, 6.0]],  # no direction, no "direction" key
    }
    scaler = Scaler.from_spec(spec)
    scaler.load_state_dict(json.loads(json.dumps(before)))
    state = scaler.state_dict()
    assert state["direction"] == 1 and state["restarts"] == [[60.0, 12.0], [80.0, 6.0]]
    decision = scaler.observe(430.0, 101.0, backlog=500.0, running=9)
    inputs = decision.explain["inputs"]  # type: ignore[index]
    assert (inputs["restart"], inputs["restart_down"]) == (12.0, 12.0)
    # A direction other than 1 or -1, anywhere, is refused naming the field; nothing changes.
    kept = json.dumps(scaler.state_dict())
    for broken, field in [
        ({**before, "direction": 0}, "direction=0"),
        ({**before, "direction": True}, "direction=True"),
        ({**before, "restarts": [[60.0, 12.0, 2]]}, "restarts="),
        ({**before, "actuations": [[60.0, 12.0, 1]]}, "actuations="),
    ]:
        with pytest.raises(ValueError, match=field):
            scaler.load_state_dict(broken)
        assert json.dumps(scaler.state_dict()) == kept


def test_a_state_saved_before_a_stated_default_late_price_was_kept_in_the_spec_loads() -> None:
    # Before session 23 a spec that stated late_price 1,000 (the default) left it out; now it
    # keeps it, so that the cap on an unstated price does not apply. A state stored then loads.
    spec = {"policy": {"capacity": 50.0, "late_price": 1000.0}}
    scaler = Scaler.from_spec(spec, operators=4)
    for t in range(20):
        scaler.observe(400.0 + 10.0 * (t % 3), float(t), backlog=50.0, running=scaler.operators)
    assert scaler.spec["policy"]["late_price"] == 1000.0
    before = json.loads(json.dumps(scaler.state_dict()))
    del before["spec"]["policy"]["late_price"]  # as stored before
    restored = Scaler.from_spec(spec)
    restored.load_state_dict(before)
    assert restored.state_dict() == scaler.state_dict()
    # The same stored state does not load into a Scaler of another late price.
    with pytest.raises(ValueError, match="state was taken from"):
        Scaler.from_spec({"policy": {"capacity": 50.0, "late_price": 50.0}}).load_state_dict(before)
