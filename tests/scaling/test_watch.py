"""scaling.watch and scaling.measure: actuation delays, decisions pending or landing in parts and
an operation's late seconds learnt from the reports; the level's wander. The restart's
measurement: test_watch_restart.py."""

from __future__ import annotations

import json
import math
import random

import pytest

from scaling.cost import AFTER
from scaling.measure import (
    HISTORY,
    MAX_AGE,
    estimate,
    recorded,
    wandered,
)
from scaling.watch import Watch


def landing(watch: Watch, t: float) -> float:
    """Seconds until an operation decided at ``t`` lands, as the Scaler prices it: the delay
    measured (none stated), less what a pending decision has waited."""
    return watch.waiting(t, watch.actuation(t))[0]


def decided_at(t: float, running: int, operators: int) -> Watch:
    """A Watch that has seen ``running`` reported at ``t - 1`` and a decision of ``operators``
    at ``t``."""
    watch = Watch()
    watch.seen(t - 1.0, running, running, last_t=None)
    watch.decided(t, running, operators, reported=True)
    return watch


def test_the_actuation_delay_is_measured_when_the_decided_count_lands() -> None:
    watch = decided_at(100.0, 8, 9)
    assert landing(watch, 100.0) == 0.0  # nothing measured yet: taken to land at once
    for t in range(101, 130):  # still 8: not landed
        assert watch.seen(float(t), 8, 9, last_t=t - 1.0) is False
    assert landing(watch, 129.0) == 0.0 and watch.decided_at == 100.0
    assert watch.seen(130.0, 9, 9, last_t=129.0) is True
    # Landed between 129 and 130: dated from the last sample without it.
    assert watch.actuation(130.0) == 29.0 and watch.decided_at is None
    assert watch.state_dict()["actuations"] == [[130.0, 29.0]]
    # The next decision is planned to land 29 s after it; a pending one keeps its due time.
    watch.decided(200.0, 9, 11, reported=True)
    assert landing(watch, 200.0) == 29.0 and landing(watch, 210.0) == 19.0
    watch.decided(210.0, 9, 12, reported=True)  # re-targeted: its decision time is kept
    assert watch.decided_at == 200.0 and landing(watch, 240.0) == 0.0


def test_a_count_nobody_decided_measures_no_delay_but_restarts() -> None:
    watch = decided_at(0.0, 4, 5)
    assert watch.seen(10.0, 7, 5, last_t=9.0) is False  # a manual change to 7
    assert watch.actuation(10.0) == 0.0 and watch.decided_at is None
    assert watch.state_dict()["changed_at"] == 10.0


def test_a_decision_that_lands_in_parts_stays_pending_until_all_of_it_runs() -> None:
    # 2 running, 6 decided at t = 0; 5 register at t = 14 (real Spark, session 27), the sixth
    # at t = 20. Before, 5 was taken for a count nobody decided: the decision was forgotten.
    watch = decided_at(0.0, 2, 6)
    assert not watch.partly
    assert watch.seen(14.0, 5, 6, last_t=13.0) is False
    assert watch.decided_at == 0.0 and watch.partly  # still landing, its decision time kept
    assert watch.state_dict()["changed_at"] == 14.0  # and its restart has begun
    for t in (15.0, 16.0, 17.0):  # the part running stalls: measured as the restart
        watch.measure(t, 5, 6, 100.0, backlog=3000.0, processed=0.0)
    assert watch.restart(17.0, prior=0.0) == 3.0
    watch.decided(18.0, 5, 6, reported=True)  # asked again: the same operation
    assert watch.decided_at == 0.0
    assert watch.seen(20.0, 6, 6, last_t=19.0) is True
    assert watch.actuation(20.0) == 19.0 and not watch.partly and watch.decided_at is None
    # A move away from the decided count is nobody's decision: it is forgotten.
    away = decided_at(0.0, 4, 6)
    away.seen(5.0, 3, 6, last_t=4.0)
    assert away.decided_at is None and not away.partly
    # So is a decision given up: back to the part that runs.
    given_up = decided_at(0.0, 2, 6)
    given_up.seen(14.0, 5, 6, last_t=13.0)
    given_up.decided(14.0, 5, 5, reported=True)
    assert given_up.decided_at is None and not given_up.partly


def test_a_decision_back_to_the_running_count_is_not_pending() -> None:
    watch = decided_at(0.0, 4, 5)
    watch.decided(5.0, 4, 4, reported=True)
    assert watch.decided_at is None


def test_without_running_reports_each_decision_is_taken_as_landed_at_once() -> None:
    watch = Watch()
    watch.decided(10.0, 4, 6, reported=False)
    assert watch.decided_at is None and watch.state_dict()["changed_at"] == 10.0
    assert watch.actuation(10.0) == 0.0


def test_the_history_keeps_three_and_ages_out_after_a_day() -> None:
    history: list[list[float]] = []
    for t, seconds in [(0.0, 60.0), (10.0, 8.0), (20.0, 9.0), (30.0, 7.0)]:
        history = recorded(history, t, seconds)
    assert HISTORY == 3 and history == [[10.0, 8.0], [20.0, 9.0], [30.0, 7.0]]
    # The slow restart at t = 0 is forgotten once three newer ones replaced it.
    assert estimate(history, 31.0, prior=20.0) == 9.0
    # A day after the last one, none is recent: the prior again.
    assert MAX_AGE == 86_400.0
    assert estimate(history, 10.0 + MAX_AGE - 1.0, 20.0) == 9.0
    assert estimate(history, 20.0 + MAX_AGE, 20.0) == 7.0  # 10's and 20's are a day old
    assert estimate(history, 30.0 + MAX_AGE, 20.0) == 20.0
    assert recorded(history, 40.0 + MAX_AGE, 5.0) == [[40.0 + MAX_AGE, 5.0]]


def test_the_watch_state_round_trips_through_json() -> None:
    watch = decided_at(0.0, 8, 9)
    for t in range(1, 20):
        watch.seen(float(t), 8 if t < 12 else 9, 9, last_t=t - 1.0)
        watch.measure(float(t), 8 if t < 12 else 9, 9, 50.0, 500.0, 0.0 if t < 15 else 450.0)
    state = json.loads(json.dumps(watch.state_dict()))
    # Landed between 11 and 12; restarting at 12, 13 and 14 (3 s since 11), processing at 15.
    assert state["actuations"] == [[12.0, 11.0]] and state["restarts"] == [[15.0, 3.0, 1]]
    restored = Watch()
    restored.load_state_dict(state)
    assert restored.state_dict() == watch.state_dict()
    assert restored.restart(20.0, 20.0) == watch.restart(20.0, 20.0) == 3.0
    assert landing(restored, 20.0) == landing(watch, 20.0) == 11.0


def landed_at(t: float) -> Watch:
    """A Watch whose decision of 9 (8 running) landed between ``t - 1`` and ``t``."""
    watch = decided_at(t - 10.0, 8, 9)
    watch.seen(t, 9, 9, last_t=t - 1.0)
    return watch


def test_an_operation_s_late_seconds_are_counted_from_its_landing() -> None:
    watch = landed_at(100.0)
    assert watch.operation_late(100.0, prior=3.0) == 3.0  # none measured: the prior
    # 9 operators of 50/s: a backlog over 4,500 is over a 10 s latency.
    for t, backlog in [(101.0, 6000.0), (102.0, 5000.0), (103.0, 4000.0), (104.0, 100.0)]:
        watch.lateness(t, 9, 50.0, backlog, latency=10.0, prior=2.0)
    # Landed between 99 and 100, dated 100: late at 101 and 102, under the latency at 103,
    # after the planned restart (2 s): recorded then.
    assert watch.state_dict()["lates"] == [[103.0, 2.0]]
    assert watch.operation_late(104.0, prior=3.0) == 2.0
    watch.lateness(105.0, 9, 50.0, 9000.0, latency=10.0, prior=2.0)  # no operation under way
    assert watch.state_dict()["lates"] == [[103.0, 2.0]]


def test_a_restart_under_way_delays_every_record_by_what_is_left_of_it() -> None:
    watch = landed_at(0.0)
    # Nothing processed with 100 waiting: restarting. 100 records at 450/s wait 0.2 s, but the
    # restart planned (25 s) is not over: the rest of it delays them too.
    for t in range(1, 31):
        processed = 0.0 if t < 25 else 450.0
        watch.measure(float(t), 9, 9, 50.0, backlog=100.0, processed=processed)
        watch.lateness(float(t), 9, 50.0, 100.0, latency=10.0, prior=25.0)
    # Landed between -1 and 0: the restart is dated -1, the earliest, and the late seconds 0,
    # the latest (either way the longer). 0.2 s in the queue and at least 9.8 s of the planned
    # 25 left from t = 1 to 15 (15 samples); processing from 25 on, the restart is recorded (25
    # s); once it is over, the late seconds (t = 26).
    assert watch.state_dict()["restarts"] == [[25.0, 25.0, 1]]
    assert watch.state_dict()["lates"] == [[26.0, 15.0]]


def test_an_operation_late_for_ever_is_recorded_at_the_cap() -> None:
    watch = landed_at(0.0)
    for t in (100.0, 500.0, 899.0):
        watch.lateness(t, 9, 50.0, 1e9, latency=10.0, prior=8.0, interval=100.0)
    assert watch.state_dict()["lates"] == []
    watch.lateness(901.0, 9, 50.0, 1e9, latency=10.0, prior=8.0, interval=2.0)
    assert watch.state_dict()["lates"] == [[901.0, 300.0]]
    # None running with records waiting: late; with none waiting: not.
    idle = landed_at(0.0)
    idle.lateness(20.0, 0, 50.0, 1.0, latency=10.0, prior=8.0)
    idle.lateness(21.0, 0, 50.0, 0.0, latency=10.0, prior=8.0)
    assert idle.state_dict()["lates"] == [[21.0, 1.0]]


def test_a_count_nobody_decided_counts_no_late_seconds() -> None:
    watch = decided_at(0.0, 4, 5)
    watch.seen(10.0, 7, 5, last_t=9.0)  # a manual change to 7
    watch.lateness(11.0, 7, 50.0, 1e6, latency=10.0, prior=8.0)
    assert watch.state_dict()["late_since"] is None and watch.state_dict()["late_now"] == 0.0


def test_the_wander_is_the_level_s_variance_rate_whatever_the_sampling() -> None:
    # A level that walks by 5 (records/s)^2 per second, sampled every 0.5, 2 or 10 s: the
    # exponential mean over AFTER of step^2 / elapsed settles about 5 (within 15 % on 20,000 s).
    rng = random.Random(7)
    for every in (0.5, 2.0, 10.0):
        wander, seen = 0.0, []
        for index in range(int(20_000 / every)):
            wander = wandered(wander, rng.gauss(0.0, math.sqrt(5.0 * every)), every)
            if index * every > 2 * AFTER:
                seen.append(wander)
        assert sum(seen) / len(seen) == pytest.approx(5.0, rel=0.15)
    assert wandered(3.0, 1e6, 5e-324) == 3.0  # no weight: nothing to take (no overflow)


def test_the_running_count_s_age_counts_from_its_last_change() -> None:
    watch = Watch()
    watch.seen(0.0, 4, 4, last_t=None)
    assert watch.age(100.0) == 0.0  # no change seen yet
    watch.decided(100.0, 4, 6, reported=True)
    watch.seen(101.0, 4, 6, last_t=100.0)
    watch.seen(131.0, 6, 6, last_t=130.0)  # landed after t = 130
    assert watch.age(131.0) == 1.0 and watch.age(630.0) == 500.0
    copy = Watch()
    copy.load_state_dict(json.loads(json.dumps(watch.state_dict())))
    assert copy.age(630.0) == 500.0
