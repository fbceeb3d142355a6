"""How the level moves between samples: what the cost model needs beyond the level itself.

The filter gives a level; a decision that lands in tens of seconds also needs where the level
is going (its slope), what the samples say that the level has not taken yet (their excess over
it, which fades as the filter follows or the spike ends), how wrong the level has been (the
excess squared, which ``scaling.measure.level_error`` compares with the filter's standard
error) and how fast it wanders beyond its slope. Each is an exponential mean over seconds,
not samples, whatever the sampling interval. Pure: time enters only as the seconds elapsed.

>>> trend = Trend()
>>> for elapsed, volume, level in [(None, 100.0, 100.0), (1.0, 130.0, 100.0), (1.0, 110.0, 102.0)]:
...     trend.follow(volume, level, elapsed, warm=True)
>>> round(trend.slope, 3), round(trend.excess, 2)  # a rise of 2, over a minute; 15 s of excess
(0.033, 2.33)
"""

from __future__ import annotations

import math
from typing import Any

from scaling.cost import AFTER, EXCESS
from scaling.measure import smoothed_slope, wandered
from scaling.scaler_state import optional


class Trend:
    """The last level and how it moves; rates in records/s, times in seconds."""

    def __init__(self) -> None:
        self.filtered: float | None = None  # the last filtered volume
        self.slope = 0.0  # its rate of change, records/s per second, smoothed over a minute
        self.excess = 0.0  # the samples' excess over it, records/s, over cost.EXCESS seconds
        self.missed = 0.0  # the excess squared, (records/s)², over cost.AFTER seconds
        self.wander = 0.0  # the level's variance rate beyond its slope, (records/s)²/s

    def follow(self, volume: float, filtered: float, elapsed: float | None, warm: bool) -> None:
        """Take a sample's ``volume`` and the level ``filtered`` after it, ``elapsed`` seconds
        after the last sample (``None`` for the first). Measured from the end of the filter's
        warm-up (``warm``): its first outputs are no level yet, and would read as a ramp."""
        level = self.filtered
        if warm and level is not None and elapsed is not None:
            beyond = filtered - level - self.slope * elapsed  # what the slope did not say
            self.wander = wandered(self.wander, beyond, elapsed)
            self.slope = smoothed_slope(self.slope, filtered - level, elapsed)
            weight = -math.expm1(-elapsed / EXCESS)
            self.excess += weight * (volume - filtered - self.excess)
            longer = -math.expm1(-elapsed / AFTER)
            self.missed += longer * (self.excess * self.excess - self.missed)
        self.filtered = filtered

    def state_dict(self) -> dict[str, Any]:
        """The five values, JSON-ready, under the Scaler state's keys."""
        return {
            "filtered": self.filtered,
            "slope": self.slope,
            "excess": self.excess,
            "missed": self.missed,
            "wander": self.wander,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state_dict()``'s keys of a state ``scaling.scaler_state`` checked."""
        self.filtered = optional(state["filtered"])
        self.slope = float(state["slope"])
        self.excess = float(state["excess"])
        self.missed = float(state["missed"])
        self.wander = float(state["wander"])
