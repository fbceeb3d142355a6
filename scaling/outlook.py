"""What is known of a stage when it decides: the estimates the cost model prices counts on
(``scaling.cost``), as the Scaler measured them (``scaling.scaler``, ``scaling.watch``)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Outlook:
    """What is known of a stage when it decides; rates in records/s, times in seconds.

    Attributes
    ----------
    level, level_error
        The arrival rate's estimate and its standard error.
    excess
        How far the recent samples ran above the level, records/s (averaged over
        ``scaling.cost.EXCESS`` seconds): a change the filter has not followed yet, expected to
        fade over as long.
    slope
        The level's rate of change, records/s per second (followed until an operation lands).
    variance
        The arrivals' variance per second, records²/s (per second, whatever the sampling).
    backlog
        Records waiting now.
    running
        Operators running now.
    landing
        Seconds until an operation decided now would land (the actuation delay, less the time a
        pending one has already waited).
    restart
        Seconds a scale-up stops processing once it lands (a scale-down too, unless
        ``restart_down`` says otherwise).
    wander
        How fast the level's variance grows beyond its slope, (records/s)²/s
        (``scaling.measure.wandered``): how soon a count that serves it may not.
    operation_late
        Late seconds an operation brings, measured from the job's own (``scaling.watch``),
        which is what a later correction costs; ``None``: the restart's excess over the
        latency, ``max(restart - latency, 0)``.
    restart_down
        Seconds a scale-down stops processing once it lands, where it differs from a
        scale-up's ``restart`` (measured per direction: ``scaling.measure``); ``None``: the
        same. Every count is still priced over one horizon, :math:`D + \\max(P, P_-) + T`: a
        count whose restart is shorter serves longer after it.
    tenure
        Seconds the count decided now is expected to stand once its restart is over, the
        :math:`T` of the horizon (``scaling.cost``); ``None``: ``scaling.cost.AFTER``.
    pending
        The count of a decision that has partly landed (``scaling.watch.Watch.partly``: 5 of
        6 executors running): the rest of that operation, not a new one. It lands after
        ``landing`` with no restart and no price of its own (its restart began with its first
        part, and stalled every count alike). ``None``: none partly landed.
    overdue
        Seconds a pending decision has waited past the actuation delay
        (``scaling.watch.Watch.waiting``): told in the record, not priced (``landing`` is then
        0: it is priced as landing at once).
    delay
        The actuation delay decided with, seconds: the longest recent one measured, else the
        policy's ``delay`` (``scaling.watch.Watch.actuation``); ``landing`` is it less what a
        pending decision has waited. Told in the record, so that "past its delay" says which.
    """

    level: float
    level_error: float
    excess: float
    slope: float
    variance: float
    backlog: float
    running: int
    landing: float
    restart: float
    wander: float = 0.0
    operation_late: float | None = None
    restart_down: float | None = None
    tenure: float | None = None
    pending: int | None = None
    overdue: float = 0.0
    delay: float = 0.0
