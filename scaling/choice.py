"""Which count to run: the candidate of least expected cost, within the bounds, and why."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from scaling.cost import AFTER, Outlook, Pricer
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
            "priced": len(self.pricer.priced),  # counts the search priced
        }


def guesses(outlook: Outlook, capacity: float) -> tuple[int, int]:
    """Where the search starts: the count the level needs once an operation lands, one more;
    and the count that also drains, within the horizon after landing, the backlog the operation
    finds and its restart piles up (the far side of a plateau where every count near the level
    is late for the whole horizon).

    >>> calm = Outlook(level=380.0, level_error=5.0, excess=0.0, slope=0.0, variance=3600.0,
    ...                backlog=0.0, running=8, landing=0.0, restart=8.0)
    >>> guesses(calm, 50.0), guesses(dataclasses.replace(calm, backlog=1e6), 50.0)
    ((9, 9), (9, 75))
    """
    ahead = outlook.landing + outlook.restart
    rate = outlook.level + max(outlook.excess, 0.0) + max(outlook.slope, 0.0) * ahead
    need = max(math.ceil(rate / capacity), 0) + 1
    found = outlook.backlog + rate * ahead
    return need, max(math.ceil((rate + found / AFTER) / capacity), need)


def cheapest_change(pricer: Pricer, starts: tuple[int, int], running: int) -> int:
    """The count of least cost among those other than ``running`` (an operation): from each
    start (``guesses``), downhill in strides that double while the cost falls and halve when
    it does not (a few dozen counts cover thousands). Operator-seconds grow linearly with the
    count and late seconds fall, smoothly (``scaling.cost``); but where every count near the
    level is late for the whole horizon the cost is flat there, which the far start sees past.
    ``MOST_CANDIDATES`` counts at most."""

    def total(count: int) -> float:
        return pricer.terms(count).total if count >= 0 and count != running else math.inf

    def walk(best: int) -> int:
        if best == running:
            best += 1
        for direction in (1, -1):
            stride = 1
            while stride >= 1 and len(pricer.priced) < MOST_CANDIDATES:
                following = best + direction * stride
                if following == running:
                    following += direction
                if total(following) < total(best):
                    best, stride = following, stride * 2
                else:
                    stride //= 2
        return best

    return min((walk(start) for start in dict.fromkeys(starts)), key=total)


def choose(outlook: Outlook, policy: ThresholdPolicy) -> Choice:
    """The count of least expected cost within the bounds (``ThresholdPolicy``), and the one
    without them: the cheaper of holding the running count and the cheapest operation. With
    ``late_probability``: the cheapest count whose expected late share of the horizon is within
    it (operator-seconds and operations priced only), else the least late.

    >>> policy = ThresholdPolicy(capacity=50.0, max_operators=8)
    >>> surge = Outlook(level=520.0, level_error=5.0, excess=0.0, slope=0.0, variance=3600.0,
    ...                 backlog=2000.0, running=8, landing=0.0, restart=8.0)
    >>> choice = choose(surge, policy)
    >>> choice.operators, choice.unbounded  # 18 would drain it soon after the restart
    (8, 18)
    """
    pricer = Pricer(outlook, policy.prices)
    running = outlook.running
    starts = guesses(outlook, policy.capacity)
    if policy.late_probability is None:
        change = cheapest_change(pricer, starts, running)
        unbounded = min((change, running), key=lambda count: pricer.terms(count).total)
        bounded = [policy.clamp(change)]
        if policy.clamp(running) == running:
            bounded.append(running)
        chosen = min(bounded, key=lambda count: pricer.terms(count).total)
        return Choice(chosen, unbounded, pricer)
    allowed = policy.late_probability * pricer.horizon
    low = max(starts[0] - 4, 0)
    counts = {*range(low, max(starts[1], low + 8) + 1), running}
    if len(counts) > MOST_CANDIDATES:  # a huge backlog: every few counts
        step = math.ceil(len(counts) / MOST_CANDIDATES)
        counts = {*range(low, max(counts) + 1, step), running, starts[1]}

    def best(candidates: set[int]) -> int:
        """The cheapest within the share, else the least late."""
        within = [n for n in candidates if pricer.terms(n).late_seconds <= allowed]
        if not within:
            return min(candidates, key=lambda n: pricer.terms(n).late_seconds)
        return min(within, key=lambda n: pricer.terms(n).total)

    within_bounds = {policy.clamp(n) for n in counts} - ({running} - {policy.clamp(running)})
    return Choice(best(within_bounds), best(counts), pricer)
