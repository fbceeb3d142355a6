"""The Watch: what a Scaler learns of its job's actuation, from the running counts reported."""

from __future__ import annotations

import math
from typing import Any

from scaling.measure import CAP, DOWN, UP, estimate, recorded, restarting
from scaling.scaler_state import optional


class Watch:
    """Decisions not yet running, the actuation delays, restarts and the late seconds an
    operation brings, measured from the reports.

    When the running count becomes the decided one, the time from the decision to the last
    sample without it is an actuation delay (it landed between the two). From then, each sample
    that processed under half of what it could (its capacity, or the work there was) extends
    the restart under way; the first that processes again ends it
    (``scaling.measure.restarting``). From a landing on, each sample whose queueing delay (the
    backlog over the running capacity, plus the rest of a restart under way) is over the
    latency adds its interval to the operation's late seconds, until the delay is back under
    the latency once the planned restart is over (``lateness``). A job that reports no running
    count is taken to run each decision at once. Estimates are the largest recent measurements
    (``scaling.measure``): a slow restart is not remembered forever. Restarts are kept per
    direction (``scaling.measure.UP``, ``DOWN``): an operation's is that of the change of the
    running count it brought.

    >>> watch = Watch()
    >>> watch.seen(10.0, 4, 4, last_t=None)  # the first sample reports 4 running
    False
    >>> watch.decided(10.0, 4, 5, reported=True)  # 5 decided at t = 10
    >>> watch.seen(40.0, 4, 5, last_t=39.0), watch.seen(41.0, 5, 5, last_t=40.0)
    (False, True)
    >>> watch.actuation(41.0)  # landed between 40 and 41: 30 s after the decision
    30.0
    >>> for t in (42.0, 43.0, 44.0):  # nothing processed with 900 records waiting
    ...     watch.measure(t, 5, 5, 50.0, backlog=900.0, processed=0.0)
    >>> watch.measure(45.0, 5, 5, 50.0, backlog=500.0, processed=250.0)
    >>> watch.restart(45.0, prior=8.0), watch.restart(45.0, prior=8.0, direction=DOWN)
    (4.0, 4.0)
    """

    def __init__(self) -> None:
        self._running: int | None = None  # the running count the last sample reported
        self._before = 0  # and the one before it (of this sample's interval's start)
        self.decided_at: float | None = None  # t of a decided count not running yet
        self._changed_at: float | None = None  # t the running count last changed
        self._restart_now: float | None = None  # seconds stopped so far by the one under way
        self._direction = UP  # of the operation that landed last: UP or DOWN
        self._restarts: list[list[float]] = []  # recent restarts, [t, seconds, direction]
        self._actuations: list[list[float]] = []  # recent actuation delays, [t, seconds]
        self._late_since: float | None = None  # t an operation landed, its lateness counted
        self._late_now = 0.0  # seconds late since then
        self._lates: list[list[float]] = []  # recent operations' late seconds, [t, seconds]

    def seen(self, t: float, running: int | None, decided: int, last_t: float | None) -> bool:
        """Take a sample's reported ``running`` count; whether the ``decided`` count landed."""
        seen = decided if self._running is None else self._running
        self._before, landed = seen, False
        if running is not None and last_t is not None and running != seen:
            direction = UP if running > seen else DOWN
            decided_at = self.decided_at
            if running == decided and decided_at is not None:
                self._actuations = recorded(self._actuations, t, last_t - decided_at)
                self._landed(last_t, direction)
                # Dated t, the latest it may have landed (the restart, from the earliest): the
                # rest of the restart is then the longest it can be, as the restart is.
                self._late_since, self._late_now = t, 0.0
                landed = True
            elif decided_at is not None and (seen < running < decided or seen > running > decided):
                # A part of the decision landed (3 of 4 new executors registered): it is still
                # landing, its decision time kept, and its restart has started. (Taken as a
                # count nobody decided, the decision was forgotten and the rest priced as a new
                # operation, then given up: docs/benchmarks.md, real Spark, session 27.)
                self._landed(t, direction, keep=True)
            else:  # a count nobody here decided: no delay to learn, but it restarts
                self._landed(t, direction)
        self._running = running
        return landed

    def decided(self, t: float, running: int, operators: int, reported: bool) -> None:
        """Note the decision of ``operators`` at ``t`` while ``running`` run: a new operation,
        a pending one re-targeted (its decision time kept), or, at the running count, none."""
        if operators == running:
            self.decided_at = None
        elif self.decided_at is None:
            self.decided_at = t
            if not reported:  # no running count reported: taken as landed at once
                self._landed(t, UP if operators > running else DOWN)

    def _landed(self, at: float, direction: int, keep: bool = False) -> None:
        """A change of the running count at ``at``: a restart still under way is recorded as
        long as it was seen (a lower bound; dropped, a stall that the next operation cut short
        was never remembered: a PySpark executor's, on real Spark), and a new one starts. The
        decision is done with unless ``keep`` (a part of it landed)."""
        if self._restart_now is not None:
            self._restarts = recorded(self._restarts, at, self._restart_now, self._direction)
        self._changed_at, self._restart_now = at, 0.0
        if not keep:
            self.decided_at = None
        self._direction = direction

    @property
    def partly(self) -> bool:
        """Whether a decision not running yet has partly landed: the running count moved
        toward it since it was decided."""
        decided_at, changed_at = self.decided_at, self._changed_at
        return decided_at is not None and changed_at is not None and changed_at > decided_at

    def measure(
        self,
        t: float,
        running: int,
        decided: int,
        capacity: float,
        backlog: float,
        processed: float | None,
        interval: float = 1.0,
    ) -> None:
        """Extend the restart under way, or record it once the job processes again
        (``interval``: seconds since the last sample)."""
        if self._restart_now is None or self._changed_at is None or processed is None:
            return
        if running != decided and not self.partly:
            return  # nothing of the decided count runs yet: nothing restarts
        since = t - self._changed_at
        # The sample in whose interval the count changed processed partly at the count before:
        # it tells a stall by the smaller. (Judged by the new count, real Spark's 15 s batch
        # after a scale-up from 2 to 5, at 2 executors' rate, was taken for a 15 s restart,
        # and every scale-up after priced with it: docs/benchmarks.md, session 28.)
        count = min(running, self._before) if since <= interval else running
        paused = restarting(count, capacity, backlog, processed, interval)
        if since < CAP and paused is not False:
            if paused:  # None, no work to tell by: neither extended nor over
                self._restart_now = since
        else:
            self._restarts = recorded(self._restarts, t, self._restart_now, self._direction)
            self._restart_now = None

    def lateness(
        self,
        t: float,
        running: int,
        capacity: float,
        backlog: float,
        latency: float,
        prior: float,
        interval: float = 1.0,
    ) -> None:
        """Count the sample's ``interval`` as late for the operation that landed last while the
        queueing delay is over ``latency``: the ``backlog`` at the ``running`` capacity, plus
        the rest of a restart under way (planned as ``restart(t, prior)``). Recorded once the
        delay is under ``latency`` after the planned restart, or ``CAP`` seconds on."""
        since = self._late_since
        if since is None:
            return
        planned, elapsed = self.restart(t, prior, self._direction), t - since
        delay = backlog / running / capacity if running > 0 else math.inf if backlog > 0 else 0.0
        if self._restart_now is not None:
            delay += max(planned - elapsed, 0.0)
        if delay > latency and elapsed <= CAP:
            self._late_now += interval
        elif elapsed > planned or elapsed > CAP:
            self._lates = recorded(self._lates, t, self._late_now)
            self._late_since = None

    def operation_late(self, t: float, prior: float) -> float:
        """Late seconds an operation brings: the most of the recent ones, whichever their
        direction, else ``prior``. (Kept per direction, a scale-up made on a queue already late
        would be remembered as late for the backlog it found, which is not what the next
        operation brings: docs/baselines.md, session 21.)"""
        return estimate(self._lates, t, prior)

    def restart(self, t: float, prior: float, direction: int = UP) -> float:
        """Seconds an operation in ``direction`` is planned to stop processing at ``t``: the
        longest of the recent ones and of one under way in that direction
        (``scaling.measure.estimate``), or ``prior`` before any was measured."""
        planned = estimate(self._restarts, t, prior, direction)
        if self._restart_now is None or direction != self._direction:
            return planned
        return max(planned, self._restart_now)

    def age(self, t: float) -> float:
        """Seconds the running count has stood at ``t``: since it last changed (0 before a
        change was seen)."""
        return 0.0 if self._changed_at is None else t - self._changed_at

    def actuation(self, t: float, prior: float = 0.0) -> float:
        """Seconds from a decision to its count running: the longest recent one, else
        ``prior`` (the policy's ``delay``)."""
        return estimate(self._actuations, t, prior)

    def waiting(self, t: float, delay: float) -> tuple[float, float]:
        """Seconds until an operation decided at ``t`` lands: the actuation ``delay``
        (``actuation``'s, which the caller has), less what a pending one has waited (it keeps
        its due time when re-targeted), 0 for one past that; and the seconds it is past that, 0
        when none is pending or it is not due yet.

        The second is told, not priced: a decision that cannot land (a sixth executor where
        there is room for five) shows as such in its record. (Priced as landing in as long
        again as it is overdue, the first operation of a job whose delay nobody stated waited
        past the prior of 0 s, and the quick grid lost on both seed sets: docs/baselines.md,
        session 29.)

        >>> watch = Watch()
        >>> watch.seen(0.0, 4, 4, last_t=None)
        False
        >>> watch.decided(0.0, 4, 6, reported=True)
        >>> [watch.waiting(t, watch.actuation(t, 30.0)) for t in (10.0, 30.0, 50.0)]
        [(20.0, 0.0), (0.0, 0.0), (0.0, 20.0)]
        """
        if self.decided_at is None:
            return delay, 0.0
        left = delay - (t - self.decided_at)
        return (left, 0.0) if left >= 0.0 else (0.0, -left)

    def state_dict(self) -> dict[str, Any]:
        return {
            "running": self._running,
            "decided_at": self.decided_at,
            "changed_at": self._changed_at,
            "restart_now": self._restart_now,
            "direction": self._direction,
            "restarts": [list(pair) for pair in self._restarts],
            "actuations": [list(pair) for pair in self._actuations],
            "late_since": self._late_since,
            "late_now": self._late_now,
            "lates": [list(pair) for pair in self._lates],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Take a state checked by ``scaling.scaler_state.checked``."""
        self._running = None if state["running"] is None else int(state["running"])
        self.decided_at = optional(state["decided_at"])
        self._changed_at = optional(state["changed_at"])
        self._restart_now = optional(state["restart_now"])
        self._direction = int(state["direction"])
        self._restarts = [_entry(pair) for pair in state["restarts"]]
        self._actuations = [[float(a), float(b)] for a, b in state["actuations"]]
        self._late_since = optional(state["late_since"])
        self._late_now = float(state["late_now"])
        self._lates = [[float(a), float(b)] for a, b in state["lates"]]


def _entry(pair: list[Any]) -> list[float]:
    """A stored restart: [t, seconds], or [t, seconds, direction]."""
    return [float(pair[0]), float(pair[1]), *(int(way) for way in pair[2:])]
