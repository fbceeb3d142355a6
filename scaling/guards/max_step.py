"""MaxStep: at most so many operators added or removed per decision."""

from __future__ import annotations

from filters.base import check_number
from scaling.guards.base import Guard, Moment


class MaxStep(Guard):
    """At most ``up`` operators added and ``down`` removed per decision.

    .. math:: \\text{result} = \\min(\\text{target}, \\text{current} + \\text{up})
              \\text{ when scaling up}, \\quad
              \\max(\\text{target}, \\text{current} - \\text{down}) \\text{ when scaling down}

    Parameters
    ----------
    up
        Most operators added per decision, an integer >= 1, or ``None`` for no limit.
    down
        Most operators removed per decision, an integer >= 1, or ``None`` for no limit.

    >>> from scaling import ThresholdPolicy
    >>> MaxStep(down=1).apply(2, current=6, filtered=90.0, t=0.0,
    ...                       policy=ThresholdPolicy(capacity=50.0))
    (5, 'limited by max_step: at most -1 per decision')
    """

    name = "max_step"

    def __init__(self, up: int | None = None, down: int | None = None) -> None:
        for param, value in (("up", up), ("down", down)):
            if value is not None:
                check_number(self.name, param, value, minimum=1, integer=True)
        self.up = None if up is None else int(up)
        self.down = None if down is None else int(down)

    def _decide(self, target: int, now: Moment) -> tuple[int, str | None]:
        current = now.current
        if self.up is not None and target > current + self.up:
            return current + self.up, f"limited by max_step: at most +{self.up} per decision"
        if self.down is not None and target < current - self.down:
            return current - self.down, f"limited by max_step: at most -{self.down} per decision"
        return target, None
