"""What the Scaler does differently for a job that reports its backlog: a queue a restart stops.

A scaling operation stops processing while operators move (the restart), so the work waiting
then waits ``restart`` seconds longer, and more piles up. These pure functions decide, from
the policy and what the job reports, when a backlog is the restart's own (``settling``), how
long a restart and a decision's landing take (``measure_restart``, ``measure_actuation``),
what an operation is sized for (``operation_basis``: the backlog a scale-up finds when it
lands, ``landing_backlog``; the level of a scale-down, ``sizing_level``), how big an
operation must be and when it should wait for the backlog to fall (``queue_target``,
``held_for_restart``), how far apart scale-downs are when every restart is late by itself
(``spaced_scale_down``), what to ask for while a decision has not landed (``awaiting``), and
how the demand is made up, for a decision's reason (``demand_terms``), and the level's slope
that the demand looks ahead along (``smoothed_slope``).
"""

from __future__ import annotations

import math

from scaling.policy import ThresholdPolicy

# Share of the running capacity under which a job with work waiting counts as restarting.
RESTARTING = 0.5
# Seconds a scale-down waits after the last change of count when a restart is at least the
# latency (every operation then late by itself): Kubernetes' default scale-down stabilisation
# window (--horizontal-pod-autoscaler-downscale-stabilization, 5 minutes).
SPACING = 300.0
# Seconds over which the slope of the filtered volume is smoothed: a changepoint level moves in
# steps, and a ramp shows as several of them within a minute.
SLOPE_MEMORY = 60.0


def smoothed_slope(slope: float, change: float, elapsed: float) -> float:
    """The level's slope, tuples/s per second, once the level moved by ``change`` in
    ``elapsed`` seconds: its rates of change smoothed over ``SLOPE_MEMORY`` seconds.

    >>> round(smoothed_slope(0.0, 60.0, 60.0), 3), smoothed_slope(2.0, 5.0, 1e-15)  # no weight
    (0.632, 2.0)
    """
    weight = 1.0 - math.exp(-elapsed / SLOPE_MEMORY)  # 0 under 7e-15 s: no slope to take
    return slope + weight * (change / elapsed - slope) if weight > 0.0 else slope


def restarting(operators: int, capacity: float, backlog: float, processed: float | None) -> bool:
    """Work was waiting but under half of the running capacity was processed.

    >>> restarting(4, 50.0, backlog=500.0, processed=0.0), restarting(4, 50.0, 500.0, 200.0)
    (True, False)
    """
    running = operators * capacity
    return processed is not None and processed < RESTARTING * running < backlog


def delay(policy: ThresholdPolicy, backlog: float, operators: int) -> float:
    """Seconds the last waiting tuple waits: the backlog drained at the running capacity.

    >>> delay(ThresholdPolicy(capacity=50.0), 1000.0, 4)
    5.0
    """
    return backlog / (max(operators, 1) * policy.capacity)


def settling(
    policy: ThresholdPolicy,
    since: float | None,
    backlog: float,
    operators: int,
    processed: float | None,
) -> bool:
    """Whether a reported backlog is the restart's own, ``since`` seconds after a change.

    For ``policy.quiet`` seconds after the running count changed, the backlog neither raises
    the count nor, by its absence, lowers it: the new count drains what the restart piled up
    (FLINK-31318, keda#5008). Except once processing has resumed and the delay is already
    over the latency: the count that runs is too small, and waiting out the quiet period
    would only let the backlog grow.

    >>> policy = ThresholdPolicy(capacity=50.0)
    >>> settling(policy, 20.0, 1500.0, 4, processed=200.0)  # 7.5 s < 10 s: still draining
    True
    >>> settling(policy, 20.0, 2500.0, 4, processed=200.0)  # 12.5 s: too few operators
    False
    """
    if since is None or since >= policy.quiet:
        return False
    if policy.latency is None or restarting(operators, policy.capacity, backlog, processed):
        return True
    return delay(policy, backlog, operators) <= policy.latency


def held_for_restart(
    policy: ThresholdPolicy,
    target: int,
    operators: int,
    backlog: float,
    level: float,
    restart: float,
) -> str | None:
    """Why changing ``operators`` to ``target`` should wait, or ``None`` if it should not.

    The restart adds ``restart`` seconds to the delay of all the work waiting when it starts
    (``ThresholdPolicy.restart_room``): an operation that finds more than that backlog takes
    the delay over the latency by itself. Such an operation waits for the backlog to fall,
    while the count that runs keeps up: always for a scale-down; for a scale-up only while
    the filtered ``level`` is under the running capacity and the delay within the latency
    (otherwise waiting only lets the backlog grow).

    >>> policy = ThresholdPolicy(capacity=50.0)
    >>> held_for_restart(policy, 8, 7, backlog=1000.0, level=330.0, restart=8.0)
    'held: backlog 1000 > 800 that a restart to 8 can find within 10 s latency'
    >>> held_for_restart(policy, 8, 7, backlog=1000.0, level=360.0, restart=8.0) is None
    True
    """
    room = policy.restart_room(target, restart)
    if policy.latency is None or target == operators or backlog <= room:
        return None
    in_time = delay(policy, backlog, operators) <= policy.latency
    if target > operators and not (level < operators * policy.capacity and in_time):
        return None
    return (
        f"held: backlog {backlog:g} > {room:g} that a restart to {target} can find within "
        f"{policy.latency:g} s latency"
    )


def spaced_scale_down(policy: ThresholdPolicy, restart: float, since: float | None) -> str | None:
    """Why a scale-down ``since`` seconds after the last change of count should wait, or None.

    A restart at least as long as the latency makes every operation late by itself: a
    scale-up is still needed (without it the backlog grows), but a scale-down buys its
    savings with seconds over the latency, so it waits ``SPACING`` seconds after the last
    change: fewer, deeper scale-downs (on the compare grid with a 12 s restart, the default
    made 8–11 per run where the HPA made 4–5, docs/baselines.md).

    >>> policy = ThresholdPolicy(capacity=50.0)  # latency 10 s
    >>> spaced_scale_down(policy, 12.0, 90.0)
    'held: 90 s after a scaling operation < 300 s while a restart (12 s) is at least the latency'
    >>> spaced_scale_down(policy, 12.0, 300.0), spaced_scale_down(policy, 8.0, 90.0)
    (None, None)
    """
    if policy.latency is None or restart < policy.latency or since is None or since >= SPACING:
        return None
    return (
        f"held: {since:g} s after a scaling operation < {SPACING:g} s while a restart "
        f"({restart:g} s) is at least the latency"
    )


def awaiting(
    policy: ThresholdPolicy,
    target: int,
    decided: int,
    running: int,
    since: float,
    reasons: list[str],
) -> int:
    """The count to ask for while the last decision, ``decided`` ``since`` seconds ago, is not
    running yet; why, in ``reasons``.

    A resize takes time to land (pods or executors to start, a job to restart), and an
    autoscaler that asks for another count meanwhile may start it over: a target that moves by
    an instance from one sample to the next would then never land. So the Scaler repeats its
    decision until the job reports it running, or until ``policy.quiet`` seconds have passed
    (then it takes the decision as not applied: a failed resize, a quota, a manual change)
    and decides afresh, or until the need turns back past the count that runs (a pending
    scale-up when fewer than run are now needed). For a job whose decisions land at once this
    never holds anything.

    >>> reasons: list[str] = []
    >>> awaiting(ThresholdPolicy(capacity=50.0), 9, 10, 8, 3.0, reasons), reasons
    (10, ['held at 10: decided 3 s ago, not running yet'])
    >>> awaiting(ThresholdPolicy(capacity=50.0), 9, 10, 8, 60.0, [])  # quiet 60 s: afresh
    9
    >>> awaiting(ThresholdPolicy(capacity=50.0), 7, 10, 8, 3.0, [])  # fewer than run: turned
    7
    """
    if decided == running or target == decided or since >= policy.quiet:
        return target
    if (target - running) * (decided - running) < 0:  # the need turned back past what runs
        return target
    reasons.append(f"held at {decided}: decided {since:g} s ago, not running yet")
    return decided


def measure_restart(
    policy: ThresholdPolicy,
    measured: float | None,
    since: float,
    operators: int,
    backlog: float,
    processed: float,
) -> float | None:
    """The restart measured so far, after a sample ``since`` seconds after a change of count.

    Within the quiet period, a sample of a job still ``restarting`` makes the restart at least
    ``since``; one that processes normally makes it at least 0 (measured: nothing stopped).
    The longest is kept: it is what the next operation is planned to cost.

    >>> policy = ThresholdPolicy(capacity=50.0)
    >>> measure_restart(policy, None, 1.0, 8, backlog=0.0, processed=390.0)
    0.0
    >>> measure_restart(policy, 0.0, 6.0, 8, backlog=2400.0, processed=0.0)
    6.0
    >>> measure_restart(policy, None, 90.0, 8, backlog=2400.0, processed=0.0) is None
    True
    """
    if since >= policy.quiet:
        return measured
    waiting = restarting(operators, policy.capacity, backlog, processed)
    return max(measured or 0.0, since if waiting else 0.0)


def sizing_level(filtered: float, slope: float, mean: float, scale_down: bool) -> float:
    """The level an operation is sized with: ``filtered``, or for a scale-down while the
    level rises, at least the ``mean`` volume since the running count last changed.

    A filtered level lags a ramp: changepoint's drift mean follows one about ``memory``
    samples late, so at a ramp's end it may read 50 tuples/s under the arrivals (the compare
    grid's paper workload at SNR 10, seed 3: 437 against 487 at t = 1,371), and a scale-down
    sized on it lands with no capacity to spare. The mean since the last change (at least the
    quiet period, since a scale-down waits that long) lags by at most half of that time. A
    scale-down still goes as deep as the higher of the two allows; on a falling level, where
    the mean reads above the level, the level alone sizes it.

    >>> sizing_level(437.0, 0.4, 478.0, scale_down=True)
    478.0
    >>> sizing_level(437.0, -0.4, 478.0, scale_down=True), sizing_level(437.0, 0.4, 478.0, False)
    (437.0, 437.0)
    """
    return max(filtered, mean) if scale_down and slope > 0.0 else filtered


def measure_actuation(
    policy: ThresholdPolicy,
    measured: float | None,
    decided_at: float | None,
    landed: float,
    decision: bool,
) -> float | None:
    """The actuation delay measured so far, once the running count changed at ``landed``.

    When what runs now is the ``decision`` made at ``decided_at`` (pods or executors to start,
    a job to redeploy), and it landed within ``policy.quiet`` seconds (after that the Scaler
    took it as not applied, ``awaiting``), the delay is at least ``landed - decided_at``. The
    longest is kept, as for the restart.

    >>> policy = ThresholdPolicy(capacity=50.0)
    >>> measure_actuation(policy, None, 100.0, 130.0, True)
    30.0
    >>> measure_actuation(policy, 30.0, 100.0, 105.0, True), measure_actuation(policy, None,
    ...     100.0, 105.0, False), measure_actuation(policy, None, 100.0, 200.0, True)
    (30.0, None, None)
    """
    if not decision or decided_at is None or landed - decided_at > policy.quiet:
        return measured
    return max(measured or 0.0, landed - decided_at)


def landing_backlog(
    policy: ThresholdPolicy, backlog: float, level: float, operators: int, delay: float
) -> float:
    """The backlog a scale-up decided now finds when it lands ``delay`` seconds later: what
    waits, plus what the running ``operators`` fall short of the ``level`` meanwhile.

    >>> landing_backlog(ThresholdPolicy(capacity=50.0), 1000.0, 450.0, 8, 30.0)  # + 30 x 50
    2500.0
    """
    return backlog + delay * max(0.0, level - operators * policy.capacity)


def operation_basis(
    policy: ThresholdPolicy,
    target: int,
    operators: int,
    backlog: float,
    filtered: float,
    slope: float,
    mean: float,
    landing: float,
    reasons: list[str],
) -> tuple[float, float]:
    """The backlog and the level the operation from ``operators`` to ``target`` is sized for.

    A scale-up is sized for the backlog it will find when it lands, ``landing`` seconds from
    now (``landing_backlog``); a scale-down on ``sizing_level``. Why, in ``reasons``.

    >>> policy, reasons = ThresholdPolicy(capacity=50.0), []
    >>> operation_basis(policy, 10, 8, 1000.0, 450.0, 0.0, 440.0, 30.0, reasons), reasons
    ((2500.0, 450.0), ['backlog 2500 when it lands in 30 s'])
    >>> operation_basis(policy, 8, 9, 0.0, 437.0, 0.4, 478.0, 30.0, [])
    (0.0, 478.0)
    """
    found = backlog
    if target > operators and landing > 0.0:
        found = landing_backlog(policy, backlog, filtered, operators, landing)
    level = sizing_level(filtered, slope, mean, scale_down=target < operators)
    if found > backlog:
        reasons.append(f"backlog {found:.0f} when it lands in {landing:g} s")
    if level > filtered:
        reasons.append(f"sized on the mean {level:.1f} since the count changed: rising")
    return found, level


def queue_target(
    policy: ThresholdPolicy,
    target: int,
    operators: int,
    backlog: float,
    level: float,
    noise: float,
    restart: float,
    reasons: list[str],
    since: float | None = None,
) -> int:
    """``target`` sized and timed for a job that reports its ``backlog``; why, in ``reasons``.

    An operation restarts the job: the count it goes to is at least the one that serves the
    backlog it finds and the one its own restart piles up within the latency despite the
    ``noise`` (``ThresholdPolicy.recovery``), so a scale-up is made that big and a scale-down
    goes no lower (this sizes operations and starts none); then any operation waits while
    ``held_for_restart`` says so, and a scale-down ``since`` seconds after the last change of
    count while ``spaced_scale_down`` says so.

    >>> reasons: list[str] = []
    >>> queue_target(ThresholdPolicy(capacity=50.0), 10, 9, 1200.0, 500.0, 0.0, 8.0, reasons)
    12
    >>> reasons
    ['raised to 12: backlog 1200 + restart 8 s x 500.0 served within 10 s']
    """
    if target != operators:
        # Any operation restarts the job now: the count it goes to must serve what waits and
        # what the restart piles up within the latency, despite the noise.
        served = policy.needed(policy.recovery(backlog, level, restart, noise))
        if served > target:
            if target > operators:
                target, verb = served, "raised to"
            else:
                target = min(served, operators)
                verb = "held at" if target == operators else "down only to"
            reasons.append(
                f"{verb} {target}: backlog {backlog:g} + restart {restart:g} s x "
                f"{level:.1f} served within {policy.latency:g} s"
            )
    held = held_for_restart(policy, target, operators, backlog, level, restart)
    if held is None and target < operators:
        held = spaced_scale_down(policy, restart, since)
    if held is not None:
        reasons.append(held)
        target = operators
    return target


def demand_terms(
    policy: ThresholdPolicy,
    filtered: float,
    backlog: float | None,
    noise: float | None = None,
    slope: float | None = None,
    restart: float = 0.0,
) -> str:
    """How the demand differs from the filtered volume, for a decision's reason."""
    terms = ""
    ahead = policy.lead + restart
    if slope is not None and slope > 0.0 and ahead > 0.0:
        terms += f" + slope {slope:.3g}/s x {ahead:g} s"
        filtered += slope * ahead
    if noise is not None:
        headroom = policy.headroom(filtered, noise, restart)
        if headroom > 0.0:
            terms += f" + headroom {headroom:.1f} (noise {noise:.1f}, restart {restart:g} s)"
    if backlog and policy.catch_up is not None:
        terms += f" + backlog {backlog:g} / {policy.catch_up:g} s"
    if policy.utilisation != 1.0:
        terms += f", at utilisation {policy.utilisation:g}"
    return terms
