"""Cooldown: no new scaling operation in a direction for a while after scaling (see the class)."""

from __future__ import annotations

from typing import Any

from filters.base import check_number
from scaling.guards.base import Guard, Moment, _seconds


class Cooldown(Guard):
    """No new scaling operation in a direction for a while after scaling.

    With :math:`t_\\uparrow`, :math:`t_\\downarrow` the times of the last scale-up and
    scale-down that were carried out:

    * a scale-up (``target > current``) is held at ``current`` while
      :math:`t - t_\\uparrow <` ``up``;
    * a scale-down (``target < current``) is held at ``current`` while
      :math:`t - \\max(t_\\uparrow, t_\\downarrow) <` ``down``.

    So any scaling operation restarts the scale-down cooldown, while a scale-down never delays
    a scale-up: capacity just added because the load rose should not be released at once, but
    a rise in load after a scale-down must be met without waiting, since running short of
    operators costs more than running a few too many.

    Parameters
    ----------
    up
        Seconds after a scale-up before the next scale-up; a number >= 0.
    down
        Seconds after any scaling operation before a scale-down; a number >= 0.

    >>> from scaling import ThresholdPolicy
    >>> policy, guard = ThresholdPolicy(capacity=50.0), Cooldown(up=30.0, down=120.0)
    >>> guard.record(4, 5, 100.0, target=5)
    >>> guard.apply(3, current=5, filtered=140.0, t=140.0, policy=policy)
    (5, 'held by cooldown: last scale-up 40 s ago < 120 s')
    >>> guard.apply(7, current=5, filtered=340.0, t=140.0, policy=policy)
    (7, None)
    """

    name = "cooldown"

    def __init__(self, up: float = 0.0, down: float = 0.0) -> None:
        check_number(self.name, "up", up, minimum=0)
        check_number(self.name, "down", down, minimum=0)
        self.up = float(up)
        self.down = float(down)
        self._last_up: float | None = None
        self._last_down: float | None = None

    def _decide(self, target: int, now: Moment) -> tuple[int, str | None]:
        current, t = now.current, now.t
        if target > current:
            limit, restarted_by = self.up, {"scale-up": self._last_up}
        elif target < current:
            limit = self.down
            restarted_by = {"scale-up": self._last_up, "scale-down": self._last_down}
        else:
            return target, None
        past = [(time, what) for what, time in restarted_by.items() if time is not None]
        if past:
            time, what = max(past)
            if t - time < limit:
                elapsed = f"{_seconds(t - time)} s ago < {_seconds(limit)} s"
                return current, f"held by cooldown: last {what} {elapsed}"
        return target, None

    def record(self, operators_before: int, operators_after: int, t: float, *, target: int) -> None:
        if operators_after > operators_before:
            self._last_up = t
        elif operators_after < operators_before:
            self._last_down = t

    def _export_state(self) -> dict[str, Any]:
        return {"_last_up": self._last_up, "_last_down": self._last_down}

    def _parse_state(self, values: dict[str, Any]) -> dict[str, Any]:
        for field in ("_last_up", "_last_down"):
            if values[field] is not None:
                check_number(self.name, field, values[field])
        return {
            field: None if values[field] is None else float(values[field])
            for field in ("_last_up", "_last_down")
        }
