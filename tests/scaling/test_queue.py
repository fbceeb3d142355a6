"""A job that reports its backlog: quiet periods, operations timed for the restart, sizing."""

from __future__ import annotations

import math

import pytest

from filters import make_filter
from scaling import Scaler, ThresholdPolicy
from scaling.policy import RISK
from scaling.queue import delay, held_for_restart, queue_target, settling

POLICY = ThresholdPolicy(capacity=50.0)


def test_restart_room_is_the_backlog_a_restart_can_find_within_the_latency() -> None:
    assert POLICY.restart_room(8, restart=8.0) == pytest.approx(800.0)  # (10 - 8) s x 400
    assert POLICY.restart_room(8, restart=0.0) == pytest.approx(4000.0)
    assert POLICY.restart_room(8, restart=12.0) == 0.0  # a restart longer than the latency
    assert ThresholdPolicy(50.0, latency=None).restart_room(8, 8.0) == math.inf


def test_recovery_keeps_the_restart_s_own_tuples_in_time_despite_the_noise() -> None:
    # Without noise: a restart of 8 s delays what waits by 8 s, so 2,000 tuples must drain
    # in the 2 s left of the 10 s latency (1,000 tuples/s); never less than the volume.
    assert POLICY.recovery(2000.0, 400.0, restart=8.0) == pytest.approx(1000.0)
    assert POLICY.recovery(0.0, 400.0, restart=8.0) == pytest.approx(400.0)
    assert POLICY.restart_room(20, restart=8.0) == pytest.approx(2000.0)
    # A restart as long as the latency is late whatever the capacity: then the capacity that
    # serves the backlog and the restart's within the latency after it.
    assert POLICY.recovery(2000.0, 400.0, restart=12.0) == pytest.approx(680.0)
    # With noise: the headroom for the backlog found and for the noise during the restart.
    noisy = POLICY.recovery(600.0, 400.0, restart=8.0, noise=114.0)
    during = POLICY.headroom(400.0, 114.0, 8.0, backlog=600.0, restarting=True)
    assert noisy == pytest.approx(400.0 + during)
    assert during > POLICY.headroom(400.0, 114.0, 8.0, backlog=600.0) > 0.0
    # Its risk, averaged over the noise of the restart (Z ~ N(0, P sigma^2)), is RISK.
    h, sigma, room = during, 114.0, (10.0 - 8.0) * (400.0 + during) - 600.0
    assert math.exp(-2.0 * h * room / sigma**2) == pytest.approx(RISK)
    assert ThresholdPolicy(50.0, latency=None).recovery(2000.0, 400.0, 8.0, 114.0) == 0.0


def test_an_operation_that_the_restart_would_make_late_waits_while_the_count_keeps_up() -> None:
    # 7 run (350 tuples/s), the level is 330, 1,000 tuples wait (2.9 s): a restart to 8 adds
    # 8 s to all of them (8 + 2.5 > 10), so the scale-up waits for the backlog to fall.
    held = held_for_restart(POLICY, 8, 7, backlog=1000.0, level=330.0, restart=8.0)
    assert held is not None and "1000 > 800" in held
    assert held_for_restart(POLICY, 8, 7, backlog=700.0, level=330.0, restart=8.0) is None
    # The count that runs does not keep up (or the delay is already over the latency):
    # waiting only lets the backlog grow, so the scale-up goes ahead.
    assert held_for_restart(POLICY, 8, 7, backlog=1000.0, level=360.0, restart=8.0) is None
    assert held_for_restart(POLICY, 8, 7, backlog=3600.0, level=330.0, restart=8.0) is None
    # A scale-down always waits for a backlog its restart would make late.
    assert held_for_restart(POLICY, 6, 7, backlog=700.0, level=200.0, restart=8.0) is not None
    assert held_for_restart(POLICY, 6, 7, backlog=500.0, level=200.0, restart=8.0) is None
    assert held_for_restart(POLICY, 7, 7, backlog=1e6, level=200.0, restart=8.0) is None
    no_latency = ThresholdPolicy(50.0, latency=None)
    assert held_for_restart(no_latency, 6, 7, backlog=1e6, level=200.0, restart=8.0) is None


def test_settling_ends_early_when_the_new_count_is_already_late() -> None:
    assert delay(POLICY, 1500.0, 4) == pytest.approx(7.5)
    assert settling(POLICY, 20.0, 1500.0, 4, processed=200.0)  # draining, within the latency
    assert not settling(POLICY, 20.0, 2500.0, 4, processed=200.0)  # 12.5 s: too few
    assert settling(POLICY, 5.0, 2500.0, 4, processed=0.0)  # still restarting
    assert not settling(POLICY, 60.0, 100.0, 4, processed=200.0)  # the quiet period is over
    assert not settling(POLICY, None, 100.0, 4, processed=200.0)  # nothing changed yet


def test_the_first_sample_of_a_queue_starts_a_quiet_period() -> None:
    # The Scaler has not seen the job restart: it scales a queue down only after `quiet`.
    queue = Scaler(make_filter("raw"), POLICY, operators=8)
    first = queue.observe(200.0, 0.0, backlog=0.0, running=8, processed=200.0)
    assert first.operators == 8 and "held: 0 s after a scaling operation" in first.reason
    assert queue.observe(200.0, 59.0, backlog=0.0, running=8, processed=200.0).operators == 8
    assert queue.observe(200.0, 60.0, backlog=0.0, running=8, processed=200.0).operators == 4
    # A volume-only stream is not a queue: it scales down at once, as before.
    plain = Scaler(make_filter("raw"), POLICY, operators=8)
    assert plain.observe(200.0, 0.0).operators == 4
    # A scale-up is never held by the quiet period.
    rising = Scaler(make_filter("raw"), POLICY, operators=4)
    assert rising.observe(320.0, 0.0, backlog=0.0, running=4, processed=200.0).operators == 7


def test_a_scaler_times_and_sizes_a_queue_s_operations_for_its_restart() -> None:
    policy = ThresholdPolicy(capacity=50.0, catch_up=None)
    scaler = Scaler(make_filter("raw"), policy, operators=7)
    scaler.observe(300.0, 0.0, backlog=0.0, running=7, processed=300.0)
    # A restart to 8 measured at 8 s: a scale-up 10 s later ...
    assert scaler.observe(360.0, 10.0, backlog=0.0, running=7, processed=350.0).operators == 8
    for t in range(11, 19):  # ... stops processing for 8 s
        scaler.observe(360.0, float(t), backlog=360.0 * (t - 10), running=8, processed=0.0)
    assert scaler.state_dict()["restart"] == pytest.approx(8.0)
    # 2 minutes on, 1,000 tuples wait and the level needs 6: a restart to 6 now would leave
    # the last of them 8 + 1000 / 300 > 10 s late (10 would be needed), so the scale-down
    # waits ...
    late = scaler.observe(280.0, 130.0, backlog=1000.0, running=8, processed=400.0)
    assert late.operators == 8 and "held at 8: backlog 1000 + restart 8 s" in late.reason
    # ... until the backlog has fallen.
    assert scaler.observe(280.0, 131.0, backlog=100.0, running=8, processed=400.0).operators == 6


def test_the_policy_s_restart_stands_in_until_an_operation_has_been_watched() -> None:
    policy = ThresholdPolicy(capacity=50.0, catch_up=None, quiet=30.0, restart=20.0)
    scaler = Scaler(make_filter("raw"), policy, operators=9)
    first = scaler.observe(400.0, 0.0, backlog=0.0, running=9, processed=400.0)
    # 20 s assumed, more than the 10 s latency: the restart's own backlog needs headroom of
    # (20 - 10) x 400 / 10 = 400 tuples/s, so 16 operators.
    assert scaler.restart == 20.0 and "restart 20 s" in first.reason
    assert first.operators == 16
    # The job kept processing through the operation (a resize that stops nothing): measured
    # as 0 s from the first sample after it, and the assumed 20 s no longer counts.
    after = scaler.observe(400.0, 1.0, backlog=0.0, running=16, processed=400.0)
    assert scaler.restart == 0.0 and scaler.state_dict()["restart"] == 0.0
    assert after.operators == 16  # within the quiet period: no scale-down yet
    assert scaler.observe(400.0, 31.0, backlog=0.0, running=16, processed=400.0).operators == 8
    # A restart that shows later within the quiet period is still measured (the longest).
    scaler.observe(400.0, 40.0, backlog=0.0, running=9, processed=400.0)
    scaler.observe(400.0, 45.0, backlog=2000.0, running=9, processed=0.0)
    assert scaler.restart == 5.0
    # Volume-only samples measure nothing.
    plain = Scaler(make_filter("raw"), policy, operators=9)
    plain.observe(400.0, 0.0)
    assert plain.restart == 20.0 and plain.state_dict()["restart"] is None


def test_a_scale_down_goes_no_lower_than_its_restart_can_serve() -> None:
    # 10 run and the level needs 6. A restart to n delays what waits by 8 s, which must then
    # drain in the 2 s left of the 10 s latency: n x 50 x 2 >= backlog.
    policy = ThresholdPolicy(capacity=50.0, catch_up=None, quiet=0.0, restart=8.0)
    reasons: list[str] = []
    assert queue_target(policy, 6, 10, 1300.0, 280.0, 0.0, 8.0, reasons) == 10  # 13 needed
    assert reasons == ["held at 10: backlog 1300 + restart 8 s x 280.0 served within 10 s"]
    reasons.clear()
    assert queue_target(policy, 6, 10, 700.0, 280.0, 0.0, 8.0, reasons) == 7
    assert reasons == ["down only to 7: backlog 700 + restart 8 s x 280.0 served within 10 s"]
    reasons.clear()
    assert queue_target(policy, 6, 10, 500.0, 280.0, 0.0, 8.0, reasons) == 6  # 5 would do
    assert reasons == []


def test_a_first_sample_running_another_count_measures_no_restart() -> None:
    # Created with 1 operator, the job reports 6 running from its first sample on: that is
    # what runs, not an operation, so the assumed restart stands until one is watched.
    scaler = Scaler(make_filter("raw"), POLICY, operators=1)
    scaler.observe(300.0, 0.0, backlog=0.0, running=6, processed=300.0)
    scaler.observe(300.0, 1.0, backlog=0.0, running=6, processed=300.0)
    assert scaler.restart == POLICY.restart and scaler.state_dict()["restart"] is None
    assert scaler.state_dict()["changed_at"] is None


def test_scale_downs_are_spaced_when_every_restart_is_late_by_itself() -> None:
    # A restart of 12 s against a latency of 10 s: every operation is late by itself, so a
    # scale-down waits 300 s after the last change of count (here the queue's first sample).
    policy = ThresholdPolicy(capacity=50.0, catch_up=None, quiet=0.0, restart=12.0)
    late = Scaler(make_filter("raw"), policy, operators=16)
    held = late.observe(200.0, 0.0, backlog=0.0, running=16, processed=200.0)
    assert held.operators == 16 and "< 300 s while a restart (12 s)" in held.reason
    assert late.observe(200.0, 299.0, backlog=0.0, running=16, processed=200.0).operators == 16
    down = late.observe(200.0, 300.0, backlog=0.0, running=16, processed=200.0)
    assert down.operators == 5  # (12 s x 200) / 10 s served: 240 tuples/s, 5 operators
    # A scale-up is needed whatever the restart: never spaced.
    assert late.observe(600.0, 301.0, backlog=0.0, running=5, processed=200.0).operators > 5
    # With a restart shorter than the latency, only the quiet period holds a scale-down.
    policy = ThresholdPolicy(capacity=50.0, catch_up=None, quiet=0.0, restart=8.0)
    timely = Scaler(make_filter("raw"), policy, operators=16)
    assert timely.observe(200.0, 0.0, backlog=0.0, running=16, processed=200.0).operators < 16


def test_a_decision_is_repeated_until_it_runs_and_its_restart_counts_from_then() -> None:
    # A resize lands 5 s after it is decided. Asking for another count meanwhile may start it
    # over (where a changed target restarts the resize, a target one instance up or down from
    # one sample to the next never lands), so the Scaler repeats its decision while the job
    # still reports the old count.
    policy = ThresholdPolicy(capacity=50.0, catch_up=None, quiet=30.0, restart=8.0)
    scaler = Scaler(make_filter("raw"), policy, operators=8)
    scaler.observe(390.0, 0.0, backlog=0.0, running=8, processed=390.0)
    assert scaler.observe(520.0, 1.0, backlog=0.0, running=8, processed=400.0).operators == 11
    for t in range(2, 6):  # the level falls back meanwhile, and the quiet period holds
        pending = scaler.observe(300.0, float(t), backlog=0.0, running=8, processed=300.0)
        assert pending.operators == 11, pending.reason
        assert f"held at 11: decided {t - 1} s ago, not running yet" in pending.reason
    # It lands after t = 5: its restart is measured from then, not from the decision.
    for t in range(6, 14):
        scaler.observe(400.0, float(t), backlog=400.0 * (t - 5), running=11, processed=0.0)
    scaler.observe(400.0, 14.0, backlog=3000.0, running=11, processed=550.0)
    assert scaler.restart == pytest.approx(8.0)
    # A decision still not running after `quiet` seconds is taken as not applied.
    stuck = Scaler(make_filter("raw"), policy, operators=8)
    stuck.observe(390.0, 0.0, backlog=0.0, running=8, processed=390.0)
    assert stuck.observe(520.0, 1.0, backlog=0.0, running=8, processed=400.0).operators == 11
    assert stuck.observe(300.0, 30.0, backlog=0.0, running=8, processed=300.0).operators == 11
    afresh = stuck.observe(300.0, 31.0, backlog=0.0, running=8, processed=300.0)
    assert afresh.operators < 11 and "not running yet" not in afresh.reason


def test_a_pending_scale_up_is_dropped_when_fewer_than_run_are_needed() -> None:
    # Executors asked for at a rate of 250 (3 of 100) come up one at a time; the rate falls to
    # 50 before the third: holding 3 would add one nobody needs, so the Scaler asks for 1.
    policy = ThresholdPolicy(capacity=100.0, max_operators=3)
    scaler = Scaler(make_filter("raw"), policy, operators=1)
    scaler.observe(50.0, 0.0, running=1)
    assert scaler.observe(250.0, 1.0, running=1).operators == 3
    assert scaler.observe(250.0, 2.0, running=2).operators == 3
    assert scaler.observe(250.0, 3.0, running=2).operators == 3  # pending: repeated
    down = scaler.observe(50.0, 4.0, running=2)
    assert down.operators == 1 and "not running yet" not in down.reason


def test_no_restart_is_measured_while_a_decision_waits_to_land() -> None:
    # Decided at t = 1, landing 30 s later: meanwhile the old count processes as ever, which
    # says nothing of a restart (measuring 0 there left the headroom without one).
    policy = ThresholdPolicy(capacity=50.0, catch_up=None, quiet=60.0, restart=8.0)
    scaler = Scaler(make_filter("raw"), policy, operators=8)
    scaler.observe(390.0, 0.0, backlog=0.0, running=8, processed=390.0)
    assert scaler.observe(520.0, 1.0, backlog=0.0, running=8, processed=400.0).operators == 11
    for t in range(2, 31):
        pending = scaler.observe(400.0, float(t), backlog=0.0, running=8, processed=400.0)
        assert pending.operators == 11 and scaler.restart == 8.0, t
    # Once it runs, a sample that processes normally is a restart that stopped nothing.
    scaler.observe(400.0, 31.0, backlog=0.0, running=11, processed=400.0)
    assert scaler.observe(400.0, 32.0, backlog=0.0, running=11, processed=400.0)
    assert scaler.restart == 0.0
