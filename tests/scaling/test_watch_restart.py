"""scaling.watch and scaling.measure: the restart an operation brings, measured from the
processed rates the job reports, per direction, capped, and cut short by the next landing."""

from __future__ import annotations

import json

import pytest

from scaling.measure import CAP, DOWN, UP, estimate, recorded, restarting
from scaling.watch import Watch
from tests.scaling.test_watch import decided_at


def test_the_restart_is_measured_and_recorded() -> None:
    watch = decided_at(0.0, 8, 9)
    watch.seen(1.0, 9, 9, last_t=0.0)  # landed between 0 and 1
    assert watch.restart(1.0, prior=20.0) == 20.0  # none measured yet: the prior
    for t in range(1, 9):  # 1,000 waiting, nothing processed: restarting
        watch.measure(float(t), 9, 9, 50.0, backlog=1000.0, processed=0.0)
        # The one under way counts once it is longer than what is planned.
        assert watch.restart(float(t), prior=5.0) == max(5.0, t - 0.0)
    watch.measure(9.0, 9, 9, 50.0, backlog=600.0, processed=450.0)  # processing again
    assert watch.state_dict()["restarts"] == [[9.0, 8.0, 1]]
    assert watch.restart(9.0, prior=20.0) == 8.0  # measured: the prior no longer counts
    watch.measure(10.0, 9, 9, 50.0, backlog=0.0, processed=0.0)  # no operation under way
    assert watch.state_dict()["restarts"] == [[9.0, 8.0, 1]]


def test_the_sample_a_scale_up_landed_in_is_judged_by_the_count_before() -> None:
    # Real Spark, session 28: 2 executors, 5 decided at 45.7 s; the next micro-batch ends
    # 15.4 s later with 5 registered, having read at 2 executors' rate (179 rows/s, 5,853
    # waiting). Judged by the 5, it was a 15.4 s restart, planned for every scale-up after.
    watch = decided_at(45.7, 2, 5)
    assert watch.seen(61.1, 5, 5, last_t=45.7) is True
    watch.measure(61.1, 5, 5, 100.0, backlog=5853.0, processed=179.0, interval=15.4)
    assert watch.restart(61.1, prior=0.0) == 0.0 and watch.state_dict()["restarts"][0][1] == 0.0
    # A stall in that sample shows at the count before as well: still a restart.
    stalled = decided_at(45.7, 2, 5)
    stalled.seen(61.1, 5, 5, last_t=45.7)
    stalled.measure(61.1, 5, 5, 100.0, backlog=5853.0, processed=40.0, interval=15.4)
    assert stalled.restart(61.1, prior=0.0) == pytest.approx(15.4)
    # The samples after it are judged by the count running.
    stalled.measure(62.1, 5, 5, 100.0, backlog=5900.0, processed=150.0, interval=1.0)
    assert stalled.restart(62.1, prior=0.0) == pytest.approx(16.4)


def test_a_large_count_paused_over_a_short_queue_is_restarting() -> None:
    # 15 operators (750/s) stopped with 220 waiting: under half the 750 but not under the
    # backlog, which the rule before took for a running job (a restart of 0 s was recorded, and
    # the model then took every restart for free).
    watch = decided_at(0.0, 6, 15)
    watch.seen(1.0, 15, 15, last_t=0.0)
    for t in range(1, 9):
        watch.measure(float(t), 15, 15, 50.0, backlog=220.0 * t, processed=0.0)
    watch.measure(9.0, 15, 15, 50.0, backlog=0.0, processed=1980.0)
    assert watch.state_dict()["restarts"] == [[9.0, 8.0, 1]]
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


def operate(watch: Watch, t: float, running: int, target: int, stall: int) -> float:
    """Decide ``target`` at ``t`` with ``running`` running; it runs at the next sample (so it
    landed after ``t``, the restart dated from it) and processes nothing over a queue of 1,000
    for ``stall`` s, then 450/s; the time after."""
    watch.decided(t, running, target, reported=True)
    watch.seen(t + 1.0, target, target, last_t=t)
    for second in range(2, stall + 1):
        watch.measure(t + second, target, target, 50.0, backlog=1000.0, processed=0.0)
    watch.measure(t + stall + 1.0, target, target, 50.0, backlog=500.0, processed=450.0)
    return t + stall + 2.0


def test_restarts_are_measured_and_planned_per_direction() -> None:
    # A PySpark executor added stalls a batch while its Python worker starts; one removed
    # stops nothing. With one history, the scale-up's 25 s planned every scale-down too.
    watch = Watch()
    watch.seen(0.0, 8, 8, last_t=None)
    t = operate(watch, 0.0, 8, 12, stall=25)
    assert watch.restart(t, prior=20.0, direction=UP) == 25.0
    # No scale-down measured: the lesser of the prior and the scale-ups' (optimistic, so that
    # it is made and measured), never a guess above the prior the user stated.
    assert watch.restart(t, prior=20.0, direction=DOWN) == 20.0
    assert watch.restart(t, prior=0.0, direction=DOWN) == 0.0
    for target in (11, 10, 9, 8):  # four scale-downs that stop nothing
        t = operate(watch, t, target + 1, target, stall=0)
    assert watch.restart(t, prior=20.0, direction=DOWN) == 0.0
    # ... and they do not push the scale-up's stall out of the history (three per direction).
    assert watch.restart(t, prior=20.0, direction=UP) == 25.0
    restarts = watch.state_dict()["restarts"]
    assert [entry[2] for entry in restarts] == [UP, DOWN, DOWN, DOWN]
    restored = Watch()
    restored.load_state_dict(json.loads(json.dumps(watch.state_dict())))
    assert restored.restart(t, 20.0, DOWN) == 0.0 and restored.restart(t, 20.0, UP) == 25.0


def test_a_restart_under_way_counts_for_its_own_direction_only() -> None:
    watch = Watch()
    watch.seen(0.0, 8, 8, last_t=None)
    watch.decided(0.0, 8, 12, reported=True)
    watch.seen(1.0, 12, 12, last_t=0.0)
    for t in range(2, 31):  # a scale-up stopped for 30 s (from its landing, t = 0) and counting
        watch.measure(float(t), 12, 12, 50.0, backlog=1000.0, processed=0.0)
    assert watch.restart(31.0, prior=5.0, direction=UP) == 30.0
    assert watch.restart(31.0, prior=5.0, direction=DOWN) == 5.0


def test_a_measurement_stored_without_a_direction_counts_for_both() -> None:
    before = [[10.0, 12.0], [20.0, 8.0]]  # a state from before directions
    assert estimate(before, 30.0, 5.0, UP) == estimate(before, 30.0, 5.0, DOWN) == 12.0
    after = recorded(before, 30.0, 3.0, DOWN)
    assert after == [[10.0, 12.0], [20.0, 8.0], [30.0, 3.0, DOWN]]
    assert estimate(after, 31.0, 5.0, UP) == 12.0
    # Newer scale-downs replace them for a scale-down; they stay a scale-up's until newer
    # scale-ups replace them.
    for t in (40.0, 50.0):
        after = recorded(after, t, 1.0, DOWN)
    assert estimate(after, 51.0, 5.0, DOWN) == 3.0 and estimate(after, 51.0, 5.0, UP) == 12.0
    for t in (60.0, 70.0, 80.0):
        after = recorded(after, t, 2.0, UP)
    assert [entry[0] for entry in after] == [30.0, 40.0, 50.0, 60.0, 70.0, 80.0]
    assert estimate(after, 81.0, 5.0, UP) == 2.0


def test_a_second_with_no_work_neither_extends_nor_ends_a_restart() -> None:
    # Noisy volumes clipped at 0: a second brings no record, the queue is empty, nothing is
    # processed. That says nothing of a pause; taken for "processing again", it recorded a
    # 0 s restart (paper, SNR 1, seed 2, pause 4 s: a scale-down at t = 32).
    assert restarting(9, 50.0, backlog=0.0, processed=0.0, interval=1.0) is None
    watch = decided_at(0.0, 20, 9)
    watch.seen(1.0, 9, 9, last_t=0.0)
    watch.measure(2.0, 9, 9, 50.0, backlog=0.0, processed=0.0)  # no work: unknown
    assert watch.state_dict()["restarts"] == [] and watch.state_dict()["restart_now"] == 0.0
    for t in (3.0, 4.0):
        watch.measure(t, 9, 9, 50.0, backlog=250.0 * (t - 2.0), processed=0.0)
    watch.measure(5.0, 9, 9, 50.0, backlog=0.0, processed=750.0)
    assert watch.state_dict()["restarts"] == [[5.0, 4.0, DOWN]]


def test_a_restart_cut_short_by_the_next_landing_is_recorded_as_long_as_it_was_seen() -> None:
    # On real Spark (docs/benchmarks.md, session 21): an executor added stalled its batch for
    # 9 s, a scale-down landed before the batch ended, and the stall was never remembered.
    watch = Watch()
    watch.seen(0.0, 3, 3, last_t=None)
    watch.decided(0.0, 3, 6, reported=True)
    watch.seen(1.0, 6, 6, last_t=0.0)  # landed after 0
    for t in range(2, 10):  # stalled, 9 s by t = 9
        watch.measure(float(t), 6, 6, 50.0, backlog=1000.0, processed=0.0)
    watch.decided(9.0, 6, 5, reported=True)
    watch.seen(10.0, 5, 5, last_t=9.0)  # the scale-down lands: the stall so far is recorded
    assert watch.state_dict()["restarts"] == [[9.0, 9.0, UP]]
    assert watch.restart(10.0, prior=0.0, direction=UP) == 9.0


def test_a_restart_is_capped_at_the_cap() -> None:
    watch = decided_at(0.0, 8, 9)
    watch.seen(1.0, 9, 9, last_t=0.0)
    for t in (100.0, 500.0, 899.0, 901.0):
        watch.measure(t, 9, 9, 50.0, backlog=1e6, processed=0.0)
    # Landed at 0 (the last sample without it). At 901 s the restart under way is over the
    # cap: it ends, recorded as it stood (899 s).
    assert watch.state_dict()["restarts"] == [[901.0, 899.0, 1]]
    assert recorded([], 0.0, 2000.0) == [[0.0, CAP]] and CAP == 900.0
