"""Stabilization: scale down only to the highest recent recommendation (as the HPA does)."""

from __future__ import annotations

from collections import deque
from itertools import pairwise
from typing import Any

from filters.base import check_number, reject
from scaling.guards.base import Guard, Moment, _seconds


class Stabilization(Guard):
    """Scale down only to the highest recommendation of the last ``window`` seconds.

    Kubernetes HPA's scale-down stabilisation. With :math:`r_i` the targets this guard was given
    at times :math:`t_i` (the current one included) and :math:`W` = ``window``:

    .. math:: \\text{peak} = \\max\\{ r_i : t - t_i < W \\}, \\qquad
              \\text{result} = \\begin{cases} \\text{target} & \\text{target} \\ge
              \\text{current} \\\\ \\min(\\text{current}, \\text{peak}) & \\text{otherwise}
              \\end{cases}

    Scale-ups are immediate; a scale-down waits until every higher recommendation is ``window``
    seconds old, and never goes above the current count. A recommendation exactly ``window``
    seconds old no longer counts.

    Memory is a deque of (time, recommendation) pairs with the recommendations strictly
    decreasing: a new recommendation removes every older one that is not higher (those can
    never be the peak again, as the new one outlives them), and entries older than the window
    leave from the front. The first entry inside the window is the peak; each pair is added and
    removed once (amortised O(1) per decision), and there is at most one entry per distinct
    recommendation.

    Parameters
    ----------
    window
        Seconds a recommendation is remembered; a number >= 0 (0 turns the guard off).

    >>> from scaling import ThresholdPolicy
    >>> policy, guard = ThresholdPolicy(capacity=50.0), Stabilization(window=300.0)
    >>> guard.record(6, 6, 0.0, target=6)
    >>> guard.apply(2, current=6, filtered=90.0, t=120.0, policy=policy)
    (6, 'held by stabilization: 6 recommended 120 s ago, within 300 s')
    >>> guard.apply(2, current=6, filtered=90.0, t=300.0, policy=policy)
    (2, None)
    """

    name = "stabilization"

    def __init__(self, window: float = 300.0) -> None:
        check_number(self.name, "window", window, minimum=0)
        self.window = float(window)
        self._recent: deque[tuple[float, int]] = deque()

    def _decide(self, target: int, now: Moment) -> tuple[int, str | None]:
        current, t = now.current, now.t
        if target >= current:
            return target, None
        # Entries are oldest first, so the first one inside the window is the peak of the rest.
        inside = (entry for entry in self._recent if t - entry[0] < self.window)
        time, recommendation = next(inside, (t, target))
        if recommendation <= target:
            return target, None
        result = min(current, recommendation)
        verb = "held" if result == current else "limited"
        age = f"{_seconds(t - time)} s ago, within {_seconds(self.window)} s"
        return result, f"{verb} by stabilization: {recommendation} recommended {age}"

    def record(self, operators_before: int, operators_after: int, t: float, *, target: int) -> None:
        recent = self._recent
        while recent and recent[-1][1] <= target:
            recent.pop()
        recent.append((t, target))
        while recent and t - recent[0][0] >= self.window:
            recent.popleft()

    def _export_state(self) -> dict[str, Any]:
        return {"_recent": [list(entry) for entry in self._recent]}

    def _parse_state(self, values: dict[str, Any]) -> dict[str, Any]:
        entries = values["_recent"]
        if not isinstance(entries, list | tuple) or not all(
            isinstance(entry, list | tuple) and len(entry) == 2 for entry in entries
        ):
            reject(
                self.name, "_recent", entries, "_recent must be a list of [t, recommendation] pairs"
            )
        for time, recommendation in entries:
            check_number(self.name, "_recent time", time)
            check_number(
                self.name, "_recent recommendation", recommendation, minimum=0, integer=True
            )
        if not all(a[0] <= b[0] and a[1] > b[1] for a, b in pairwise(entries)):
            allowed = "times must not decrease and recommendations must decrease"
            reject(self.name, "_recent", entries, allowed)
        return {"_recent": deque((float(time), int(rec)) for time, rec in entries)}
