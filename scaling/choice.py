"""Which count to run: the candidate of least expected cost, within the bounds, and why."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from scaling.cost import Outlook, Pricer, Terms
from scaling.policy import ThresholdPolicy

# Most counts priced per decision (each a few microseconds): bounds the work per sample when a
# backlog is so large that the search walks far.
MOST_CANDIDATES = 64


@dataclasses.dataclass(frozen=True)
class Choice:
    """The count chosen, the one the costs alone would choose, and the pricer that chose them."""

    operators: int
    unbounded: int
    pricer: Pricer

    def explain(self, policy: ThresholdPolicy) -> dict[str, Any]:
        """The inputs, prices and the cost terms of the count chosen and of one more and one
        fewer (those >= 0)."""
        outlook = self.pricer.outlook
        rows = [
            self.pricer.terms(count).to_dict()
            for count in (self.operators - 1, self.operators, self.operators + 1)
            if count >= 0
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
        return {
            "model": "cost",
            "inputs": {k: round(v, 4) if isinstance(v, float) else v for k, v in inputs.items()},
            "prices": prices,
            "horizon": self.pricer.horizon,
            "candidates": rows,
            "unbounded": self.unbounded,
        }


def first_guess(outlook: Outlook, capacity: float) -> int:
    """Where the search starts: the count the level needs once an operation lands, one more.

    >>> calm = Outlook(level=380.0, level_error=5.0, excess=0.0, slope=0.0, variance=3600.0,
    ...                backlog=0.0, running=8, landing=0.0, restart=8.0)
    >>> first_guess(calm, 50.0)
    9
    """
    ahead = outlook.landing + outlook.restart
    rate = outlook.level + max(outlook.excess, 0.0) + max(outlook.slope, 0.0) * ahead
    return max(math.ceil(rate / capacity), 0) + 1


def cheapest_change(pricer: Pricer, start: int, running: int) -> int:
    """The count of least cost among those other than ``running`` (an operation), walking from
    ``start`` downhill one count at a time: the cost of an operation is unimodal in its count
    (operator-seconds grow linearly, late seconds fall as capacity is added).
    ``MOST_CANDIDATES`` counts at most."""

    def total(count: int) -> float:
        return pricer.terms(count).total

    def step(count: int, direction: int) -> int:
        following = count + direction
        return following + direction if following == running else following

    best = start if start != running else step(start, 1)
    for direction in (1, -1):
        while len(pricer.priced) < MOST_CANDIDATES:
            following = step(best, direction)
            if following < 0 or total(following) >= total(best):
                break
            best = following
    return best


def choose(outlook: Outlook, policy: ThresholdPolicy) -> Choice:
    """The count of least expected cost within the bounds (``ThresholdPolicy``), and the one
    without them: the cheaper of holding the running count and the cheapest operation. With
    ``late_probability``: the cheapest count whose expected late share of the horizon is within
    it (operator-seconds and operations priced only), else the least late.

    >>> policy = ThresholdPolicy(capacity=50.0, max_operators=8)
    >>> surge = Outlook(level=520.0, level_error=5.0, excess=0.0, slope=0.0, variance=3600.0,
    ...                 backlog=2000.0, running=8, landing=0.0, restart=8.0)
    >>> choice = choose(surge, policy)
    >>> choice.operators, choice.unbounded  # 16 would drain it within the latency
    (8, 16)
    """
    pricer = Pricer(outlook, policy.prices)
    running = outlook.running
    start = first_guess(outlook, policy.capacity)
    if policy.late_probability is None:
        change = cheapest_change(pricer, start, running)
        unbounded = min((change, running), key=lambda count: pricer.terms(count).total)
        bounded = [policy.clamp(change)]
        if policy.clamp(running) == running:
            bounded.append(running)
        chosen = min(bounded, key=lambda count: pricer.terms(count).total)
        return Choice(chosen, unbounded, pricer)
    allowed = policy.late_probability * pricer.horizon
    counts = range(max(start - 4, 0), start + MOST_CANDIDATES // 2)
    within = [n for n in {*counts, running} if pricer.terms(n).late_seconds <= allowed]

    def best(candidates: list[int]) -> int:
        if not candidates:  # none within: the least late
            return min({*counts, running}, key=lambda n: pricer.terms(n).late_seconds)
        return min(candidates, key=lambda n: pricer.terms(n).total)

    unbounded = best(within)
    chosen = best([n for n in within if policy.clamp(n) == n] or [policy.clamp(unbounded)])
    return Choice(chosen, unbounded, pricer)


__all__ = ["Choice", "Terms", "choose"]
