"""scaling.watch and scaling.measure: actuation delays and restarts learnt from the reports."""

from __future__ import annotations

import json

from scaling.measure import CAP, HISTORY, MAX_AGE, estimate, recorded, restarting
from scaling.watch import Watch


def decided_at(t: float, running: int, operators: int) -> Watch:
    """A Watch that has seen ``running`` reported at ``t - 1`` and a decision of ``operators``
    at ``t``."""
    watch = Watch()
    watch.seen(t - 1.0, running, running, last_t=None)
    watch.decided(t, running, operators, reported=True)
    return watch


def test_the_actuation_delay_is_measured_when_the_decided_count_lands() -> None:
    watch = decided_at(100.0, 8, 9)
    assert watch.landing(100.0) == 0.0  # nothing measured yet: taken to land at once
    for t in range(101, 130):  # still 8: not landed
        assert watch.seen(float(t), 8, 9, last_t=t - 1.0) is False
    assert watch.landing(129.0) == 0.0 and watch.decided_at == 100.0
    assert watch.seen(130.0, 9, 9, last_t=129.0) is True
    # Landed between 129 and 130: dated from the last sample without it.
    assert watch.actuation(130.0) == 29.0 and watch.decided_at is None
    assert watch.state_dict()["actuations"] == [[130.0, 29.0]]
    # The next decision is planned to land 29 s after it; a pending one keeps its due time.
    watch.decided(200.0, 9, 11, reported=True)
    assert watch.landing(200.0) == 29.0 and watch.landing(210.0) == 19.0
    watch.decided(210.0, 9, 12, reported=True)  # re-targeted: its decision time is kept
    assert watch.decided_at == 200.0 and watch.landing(240.0) == 0.0


def test_a_count_nobody_decided_measures_no_delay_but_restarts() -> None:
    watch = decided_at(0.0, 4, 5)
    assert watch.seen(10.0, 7, 5, last_t=9.0) is False  # a manual change to 7
    assert watch.actuation(10.0) == 0.0 and watch.decided_at is None
    assert watch.state_dict()["changed_at"] == 10.0


def test_a_decision_back_to_the_running_count_is_not_pending() -> None:
    watch = decided_at(0.0, 4, 5)
    watch.decided(5.0, 4, 4, reported=True)
    assert watch.decided_at is None


def test_without_running_reports_each_decision_is_taken_as_landed_at_once() -> None:
    watch = Watch()
    watch.decided(10.0, 4, 6, reported=False)
    assert watch.decided_at is None and watch.state_dict()["changed_at"] == 10.0
    assert watch.actuation(10.0) == 0.0


def test_the_restart_is_measured_and_recorded() -> None:
    watch = decided_at(0.0, 8, 9)
    watch.seen(1.0, 9, 9, last_t=0.0)  # landed between 0 and 1
    assert watch.restart(1.0, prior=20.0) == 20.0  # none measured yet: the prior
    for t in range(1, 9):  # 1,000 waiting, nothing processed: restarting
        watch.measure(float(t), 9, 9, 50.0, backlog=1000.0, processed=0.0)
        # The one under way counts once it is longer than what is planned.
        assert watch.restart(float(t), prior=5.0) == max(5.0, t - 0.0)
    watch.measure(9.0, 9, 9, 50.0, backlog=600.0, processed=450.0)  # processing again
    assert watch.state_dict()["restarts"] == [[9.0, 8.0]]
    assert watch.restart(9.0, prior=20.0) == 8.0  # measured: the prior no longer counts
    watch.measure(10.0, 9, 9, 50.0, backlog=0.0, processed=0.0)  # no operation under way
    assert watch.state_dict()["restarts"] == [[9.0, 8.0]]


def test_a_large_count_paused_over_a_short_queue_is_restarting() -> None:
    # 15 operators (750/s) stopped with 220 waiting: under half the 750 but not under the
    # backlog, which the rule before took for a running job (a restart of 0 s was recorded, and
    # the model then took every restart for free).
    watch = decided_at(0.0, 6, 15)
    watch.seen(1.0, 15, 15, last_t=0.0)
    for t in range(1, 9):
        watch.measure(float(t), 15, 15, 50.0, backlog=220.0 * t, processed=0.0)
    watch.measure(9.0, 15, 15, 50.0, backlog=0.0, processed=1980.0)
    assert watch.state_dict()["restarts"] == [[9.0, 8.0]]
    # Every record there was processed: not restarting, whatever the count's capacity.
    assert not restarting(15, 50.0, backlog=0.0, processed=210.0, interval=1.0)
    # Samples 10 s apart: 2,200 waiting is 220/s of work, and 0 processed of it.
    assert restarting(15, 50.0, backlog=2200.0, processed=0.0, interval=10.0)
    assert not restarting(15, 50.0, backlog=2200.0, processed=300.0, interval=10.0)


def test_no_restart_is_measured_while_the_decided_count_is_not_running() -> None:
    watch = decided_at(0.0, 8, 9)
    watch.seen(1.0, 10, 9, last_t=0.0)  # a count nobody here decided restarts
    watch.measure(2.0, 10, 9, 50.0, backlog=1000.0, processed=0.0)
    assert watch.state_dict()["restart_now"] == 0.0  # not extended: 10 run, 9 decided
    watch.measure(3.0, 10, 10, 50.0, backlog=1000.0, processed=None)  # nothing reported
    assert watch.state_dict()["restart_now"] == 0.0


def test_a_restart_is_capped_at_the_cap() -> None:
    watch = decided_at(0.0, 8, 9)
    watch.seen(1.0, 9, 9, last_t=0.0)
    for t in (100.0, 500.0, 899.0, 901.0):
        watch.measure(t, 9, 9, 50.0, backlog=1e6, processed=0.0)
    # Landed at 0 (the last sample without it). At 901 s the restart under way is over the
    # cap: it ends, recorded as it stood (899 s).
    assert watch.state_dict()["restarts"] == [[901.0, 899.0]]
    assert recorded([], 0.0, 2000.0) == [[0.0, CAP]] and CAP == 900.0


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
    assert state["actuations"] == [[12.0, 11.0]] and state["restarts"] == [[15.0, 3.0]]
    restored = Watch()
    restored.load_state_dict(state)
    assert restored.state_dict() == watch.state_dict()
    assert restored.restart(20.0, 20.0) == watch.restart(20.0, 20.0) == 3.0
    assert restored.landing(20.0) == watch.landing(20.0) == 11.0
