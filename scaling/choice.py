"""Which count to run: the candidate of least expected cost, within the bounds, and why."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from scaling.cost import Costs, Outlook, expected_costs
from scaling.policy import ThresholdPolicy

# Most candidates priced per decision; a wider range is sampled evenly (a backlog so large
# that hundreds of counts could serve it). Bounds the work per sample.
MOST_CANDIDATES = 32
# Standard deviations of the arrivals over one latency, and of the level, that the widest
# candidate covers beyond the fluid need: past 4, a normal tail is under 1/30,000.
REACH = 4.0


@dataclasses.dataclass(frozen=True)
class Choice:
    """The count chosen, the one the costs alone would choose, and the terms that chose them."""

    operators: int
    unbounded: int
    costs: Costs
    index: dict[int, int]  # count -> its position in ``costs``

    def explain(self, outlook: Outlook, policy: ThresholdPolicy) -> dict[str, Any]:
        """The inputs and the cost terms of the count chosen and of one more and one fewer."""
        rows = [
            self.costs.terms(self.index[count])
            for count in (self.operators - 1, self.operators, self.operators + 1)
            if count in self.index
        ]
        inputs = {
            "level": outlook.level,
            "level_error": outlook.level_error,
            "excess": outlook.excess,
            "slope": outlook.slope,
            "noise_per_second": math.sqrt(outlook.variance),
            "backlog": outlook.backlog,
            "running": outlook.running,
            "landing": outlook.landing,
            "restart": outlook.restart,
        }
        prices = {
            "latency": policy.latency,
            "operator_price": policy.operator_price,
            "late_price": policy.late_price,
            "late_probability": policy.late_probability,
            "operation_price": policy.operation_price,
        }
        inputs = {
            key: round(value, 4) if isinstance(value, float) else value
            for key, value in inputs.items()
        }
        return {
            "model": "cost",
            "inputs": inputs,
            "prices": prices,
            "horizon": self.costs.horizon,
            "candidates": rows,
            "unbounded": self.unbounded,
        }


def candidates(outlook: Outlook, capacity: float, latency: float) -> list[int]:
    """Counts worth pricing: from one under the level's need to what drains the backlog that
    an operation would find within the latency, ``REACH`` deviations up; and the running count.

    >>> calm = Outlook(level=380.0, level_error=5.0, excess=0.0, slope=0.0, variance=3600.0,
    ...                backlog=0.0, running=8, landing=0.0, restart=8.0)
    >>> candidates(calm, 50.0, 10.0)
    [6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]
    """
    ahead = outlook.landing + outlook.restart
    rate = outlook.level + max(outlook.excess, 0.0) + max(outlook.slope, 0.0) * ahead
    spread = REACH * math.sqrt(outlook.variance / latency + outlook.level_error**2)
    found = outlook.backlog + rate * ahead
    low = max(math.floor(outlook.level / capacity) - 1, 0)
    high = math.ceil((rate + spread + found / latency) / capacity) + 1
    if high - low + 1 > MOST_CANDIDATES:
        counts = set(np.linspace(low, high, MOST_CANDIDATES).round().astype(int).tolist())
    else:
        counts = set(range(low, high + 1))
    return sorted(counts | {outlook.running})


def choose(outlook: Outlook, policy: ThresholdPolicy) -> Choice:
    """The count of least expected cost within the bounds (``ThresholdPolicy``), and the one
    without them. With ``late_probability``: the cheapest whose expected late share of the
    horizon is within it, else the least late.

    >>> policy = ThresholdPolicy(capacity=50.0, max_operators=8)
    >>> surge = Outlook(level=520.0, level_error=5.0, excess=0.0, slope=0.0, variance=3600.0,
    ...                 backlog=2000.0, running=8, landing=0.0, restart=8.0)
    >>> choice = choose(surge, policy)
    >>> choice.operators, choice.unbounded
    (8, 16)
    """
    counts = candidates(outlook, policy.capacity, policy.latency)
    bounded = sorted({policy.clamp(count) for count in counts})
    every = sorted(set(counts) | set(bounded))
    # One more and one fewer than what may be chosen, for the explanation.
    every = sorted(set(every) | {max(every[0] - 1, 0), every[-1] + 1})
    costs = expected_costs(outlook, policy.prices, np.array(every))
    index = {count: position for position, count in enumerate(every)}
    return Choice(
        _best(costs, bounded, index, policy),
        _best(costs, counts, index, policy),
        costs,
        index,
    )


def _best(costs: Costs, counts: list[int], index: dict[int, int], policy: ThresholdPolicy) -> int:
    positions = [index[count] for count in counts]
    total = costs.total[positions]
    if policy.late_probability is not None:
        late = costs.late_seconds[positions]
        within = late <= policy.late_probability * costs.horizon
        if not within.any():
            return counts[int(np.argmin(late))]
        total = np.where(within, total, np.inf)
    return counts[int(np.argmin(total))]
