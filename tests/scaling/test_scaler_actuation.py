"""The Scaler watching its job's actuation: decisions waiting to land, landing in parts or past
their delay, and the restarts and actuation delays it measured, per direction, entering what
it prices (``scaling.watch``)."""

from __future__ import annotations

import json

from filters import make_filter
from scaling import Scaler, ThresholdPolicy
from tests.scaling.test_scaler import POLICY
from tests.scaling.test_scaler_backlog import STATED, assert_reason_is_true, cost_rows


def test_waiting_to_land_while_the_running_count_lags_the_decision() -> None:
    scaler = Scaler(make_filter("raw"), STATED, operators=8)
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
    assert state["actuations"] == [[130.0, 29.0]] and state["restarts"] == [[136.0, 6.0, 1]]
    inputs = done.explain["inputs"]  # type: ignore[index]
    # No scale-down measured yet: it is planned with the scale-up's restart.
    assert (inputs["landing"], inputs["restart"], inputs["restart_down"]) == (29.0, 6.0, 6.0)
    assert "restart 6 s" in done.reason


def test_a_job_whose_scale_ups_stall_and_scale_downs_do_not_plans_each_its_own() -> None:
    # A PySpark job: an executor added stalls a batch for 25 s while its Python worker starts;
    # one removed stops nothing. The adaptor states no restart (prior 0). With one history of
    # restarts, the scale-up's 25 s planned every scale-down too (15 s over the latency, at
    # 1,000 a second): the job held its peak count once the load fell.
    policy = ThresholdPolicy(capacity=50.0, restart=0.0)
    scaler = Scaler(make_filter("raw"), policy, operators=8)
    scaler.observe(400.0, 0.0, backlog=0.0, running=8, processed=400.0)
    n = scaler.observe(600.0, 1.0, backlog=3000.0, running=8, processed=400.0).operators
    assert n > 8
    backlog = 3000.0
    for t in range(2, 27):  # runs at t = 2 (landed after 1), processes nothing to 26: 25 s
        backlog += 450.0
        scaler.observe(450.0, float(t), backlog=backlog, running=n, processed=0.0)
    t = 27
    while backlog > 0.0 and t < 400:  # drains at its capacity
        processed = min(n * 50.0, backlog + 450.0)
        backlog += 450.0 - processed
        decision = scaler.observe(450.0, float(t), backlog=backlog, running=n, processed=processed)
        t += 1
    assert backlog == 0.0 and decision.explain["inputs"]["restart"] == 25.0  # type: ignore[index]
    for second in range(t, t + 120):  # the load falls to 150/s
        decision = scaler.observe(150.0, float(second), backlog=0.0, running=n, processed=150.0)
        if decision.operators != n:
            break
    assert decision.code == "ScaledDown", decision.reason
    inputs = decision.explain["inputs"]  # type: ignore[index]
    assert (inputs["restart"], inputs["restart_down"]) == (25.0, 0.0)
    assert "restart 25 s up, 0 s down" in decision.reason
    assert_reason_is_true(decision)


def test_a_stated_actuation_delay_is_planned_until_one_is_measured() -> None:
    """``delay`` is the actuation delay's prior: an operation decided is planned to land that
    long after, less what a pending one has waited, until the running counts show one land."""
    policy = ThresholdPolicy(capacity=50.0, restart=0.0, delay=30.0)
    scaler = Scaler(make_filter("raw"), policy, operators=8)
    first = scaler.observe(400.0, 0.0, backlog=0.0, running=8, processed=400.0)
    assert first.explain is not None and first.explain["inputs"]["landing"] == 30.0
    surge = scaler.observe(700.0, 1.0, backlog=3000.0, running=8, processed=400.0)
    assert surge.operators > 8
    waiting = scaler.observe(700.0, 11.0, backlog=6000.0, running=8, processed=400.0)
    assert waiting.explain is not None and waiting.explain["inputs"]["landing"] == 20.0
    assert waiting.operators > 8  # still pending (re-targeted or not, due at t = 31)
    landed = scaler.observe(700.0, 13.0, backlog=6000.0, running=waiting.operators, processed=0.0)
    # Landed between 11 and 13: 10 s after the decision at 1, measured, replaces the prior.
    assert landed.explain is not None and landed.explain["inputs"]["landing"] == 10.0
    unstated = Scaler(make_filter("raw"), ThresholdPolicy(capacity=50.0), operators=8)
    decision = unstated.observe(400.0, 0.0, backlog=0.0, running=8, processed=400.0)
    assert decision.explain is not None and decision.explain["inputs"]["landing"] == 0.0


def test_a_decision_that_lands_in_parts_is_asked_for_again_not_given_up() -> None:
    """5 of a decided 6 run (executors register one by one): the sixth is the rest of the
    operation under way, with no restart or price of its own. Taken for a count nobody decided,
    the sixth was priced as a new operation, with its restart's stall, and given up while 5
    could not keep up (real Spark, session 27: 118 late seconds)."""
    policy = ThresholdPolicy(capacity=100.0, max_operators=6, restart=8.5, late_price=1000.0)
    scaler = Scaler(make_filter("raw"), policy, operators=2)
    decided = scaler.observe(375.0, 0.0, backlog=3600.0, running=2, processed=200.0)
    assert (decided.operators, decided.code) == (6, "LimitedByBound")
    part = scaler.observe(375.0, 14.0, backlog=5600.0, running=5, processed=200.0)
    assert (part.previous, part.operators, part.code) == (5, 6, "WaitingToLand"), part.reason
    assert part.explain is not None and part.explain["inputs"]["pending"] == 6
    rows = cost_rows(part)
    assert rows[6]["operation_cost"] == 0.0 and rows[7]["operation_cost"] > 0.0
    assert rows[6]["total"] < rows[5]["total"]
    assert "5 of 6 decided run: 6 is the rest of that operation" in part.reason
    assert_reason_is_true(part)
    # The same sample to a Scaler that decided nothing: 5 is what runs, and 6 a new operation,
    # dearer than holding 5.
    fresh = Scaler(make_filter("raw"), policy, operators=5)
    held = fresh.observe(375.0, 14.0, backlog=5600.0, running=5, processed=200.0)
    assert held.explain is not None and held.explain["inputs"]["pending"] is None
    assert (held.operators, cost_rows(held)[6]["operation_cost"]) == (5, 30.0)
    # All 6 running: landed, nothing pending.
    landed = scaler.observe(375.0, 20.0, backlog=5000.0, running=6, processed=300.0)
    assert landed.code != "WaitingToLand" and landed.explain is not None
    assert landed.explain["inputs"]["pending"] is None


def test_a_decision_past_its_delay_says_so_and_is_priced_as_landing_at_once() -> None:
    """A decided count that has not run for longer than the actuation delay (a sixth executor
    where there is room for five) keeps waiting to land, and its record and prose say by how
    much it is overdue; the counts are priced as before, as landing at once."""
    policy = ThresholdPolicy(capacity=50.0, restart=0.0, delay=30.0)
    scaler = Scaler(make_filter("raw"), policy, operators=8)
    scaler.observe(400.0, 0.0, backlog=0.0, running=8, processed=400.0)
    surge = scaler.observe(700.0, 1.0, backlog=3000.0, running=8, processed=400.0)
    assert surge.operators > 8 and surge.explain is not None
    assert surge.explain["inputs"]["overdue"] == 0.0 and "s past its" not in surge.reason
    for t in range(2, 80):  # nothing lands: still 8 running, the backlog served at 400/s
        late = scaler.observe(700.0, float(t), backlog=3000.0, running=8, processed=400.0)
    assert late.code == "WaitingToLand" and late.explain is not None
    inputs = late.explain["inputs"]
    assert (inputs["overdue"], inputs["landing"], inputs["delay"]) == (79.0 - 1.0 - 30.0, 0.0, 30.0)
    assert "the decision waiting to land is 48 s past its 30 s delay" in late.reason


def test_a_decision_past_an_unstated_delay_names_the_delay_it_is_past() -> None:
    """With no delay stated and none measured yet the model plans on the policy's prior of
    0 s (``scaling.policy.DELAY``), so a pending decision is overdue from its first second;
    the prose names that 0 s rather than an unnamed "delay", and once a decision has landed
    the delay measured is the one in the record (landed between the samples at 6 and 13 s: 5 s,
    from the decision to the last sample it had not landed by, ``scaling.watch``)."""
    scaler = Scaler(make_filter("raw"), ThresholdPolicy(capacity=50.0, restart=0.0), operators=8)
    scaler.observe(400.0, 0.0, backlog=0.0, running=8, processed=400.0)
    scaler.observe(700.0, 1.0, backlog=3000.0, running=8, processed=400.0)
    waiting = scaler.observe(700.0, 6.0, backlog=3000.0, running=8, processed=400.0)
    assert waiting.explain is not None and waiting.explain["inputs"]["delay"] == 0.0
    assert "is 5 s past its 0 s delay" in waiting.reason
    decided = waiting.operators
    landed = scaler.observe(700.0, 13.0, backlog=2000.0, running=decided, processed=700.0)
    assert landed.explain is not None and landed.explain["inputs"]["delay"] == 5.0
