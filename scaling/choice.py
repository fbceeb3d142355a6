"""Which count to run: the candidate of least expected cost, within the bounds, and why."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from scaling.cost import AFTER, Pricer, Prices
from scaling.outlook import Outlook
from scaling.policy import ThresholdPolicy
from scaling.rounding import rounded

# Most counts priced per decision (each a few microseconds): bounds the work per sample when a
# backlog is so large that the search walks far.
MOST_CANDIDATES = 64


@dataclasses.dataclass(frozen=True)
class Deferral:
    """A change that costs less once the running count has drained the backlog: ``operators``
    decided in ``wait`` seconds costs ``later``, against ``now`` decided now (both over the
    longer horizon), so the running count is held meanwhile."""

    operators: int
    wait: float
    later: float
    now: float

    def to_dict(self) -> dict[str, float | int]:
        return {
            "operators": self.operators,
            "wait": rounded(self.wait, 3),
            "later": rounded(self.later, 3),
            "now": rounded(self.now, 3),
        }


@dataclasses.dataclass(frozen=True)
class Choice:
    """The count chosen, the one the costs alone would choose, the pricer that chose them, and
    the change put off until the backlog drains, if one was."""

    operators: int
    unbounded: int
    pricer: Pricer
    deferral: Deferral | None = None

    def explain(self, policy: ThresholdPolicy) -> dict[str, Any]:
        """The inputs, prices and the cost terms of the count chosen and of one more and one
        fewer (those >= 0)."""
        outlook = self.pricer.outlook
        down = outlook.restart_down
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
            "pending": outlook.pending,
            "overdue": outlook.overdue,
            "delay": outlook.delay,
            "restart": outlook.restart,
            "restart_down": outlook.restart if down is None else down,
            "wander": outlook.wander,
            "operation_late": outlook.operation_late,
            "tenure": AFTER if outlook.tenure is None else outlook.tenure,
        }
        prices = {
            "latency": policy.latency,
            "operator_price": policy.operator_price,
            # the price decided with: unstated, it depends on the restart (prices_for)
            "late_price": None if policy.late_price is None else self.pricer.prices.late,
            "late_price_stated": policy.late_price_stated,
            "late_probability": policy.late_probability,
            "operation_price": policy.operation_price,
        }
        record = {
            "model": "cost",
            "inputs": {k: rounded(v, 4) if isinstance(v, float) else v for k, v in inputs.items()},
            "prices": prices,
            "horizon": self.pricer.horizon,
            "candidates": rows,
            "unbounded": self.unbounded,
            "priced": len(self.pricer.priced),  # counts the search priced
        }
        if self.deferral is not None:
            record["deferred"] = self.deferral.to_dict()
        return record


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
    ``MOST_CANDIDATES`` counts at most.

    A count whose operator-seconds and operation alone (``Pricer.least``) cost more than the
    best so far cannot be cheaper: it is not priced (its late seconds would only add), and the
    walk goes as if it had been."""
    terms, least, priced = pricer.terms, pricer.least, pricer.priced
    looked = set(priced)  # the counts priced, or ruled out by their least cost

    def total(count: int) -> float:
        return terms(count).total if count >= 0 and count != running else math.inf

    def walk(best: int) -> int:
        if best == running:
            best += 1
        lowest = terms(best).total
        for direction in (1, -1):
            stride = 1
            while stride >= 1 and len(looked) < MOST_CANDIDATES:
                following = best + direction * stride
                if following == running:
                    following += direction
                looked.add(best)  # counted from its first comparison, as when priced there
                if following >= 0:  # a count (never the running one: stepped over above)
                    looked.add(following)
                    # Late seconds are >= 0 up to rounding far below the margin.
                    if following in priced or least(following) - lowest <= 1e-9 * (
                        abs(lowest) + 1.0
                    ):
                        cost = terms(following).total
                        if cost < lowest:
                            best, lowest, stride = following, cost, stride * 2
                            continue
                stride //= 2
        return best

    return min((walk(start) for start in dict.fromkeys(starts)), key=total)


def drained(outlook: Outlook, capacity: float) -> float:
    """Seconds the running count takes to drain the backlog at the level's rate (0 with none,
    infinite when it cannot)."""
    if outlook.backlog <= 0.0:
        return 0.0
    spare = outlook.running * capacity - outlook.level - max(outlook.excess, 0.0)
    return outlook.backlog / spare if spare > 0.0 else math.inf


def deferral(
    outlook: Outlook, policy: ThresholdPolicy, pricer: Pricer, count: int
) -> Deferral | None:
    """The change to ``count`` put off until the running count has drained the backlog, when
    that costs less than deciding it now: its restart then starts from an empty queue, and the
    running count serves meanwhile. Both are priced over the longer horizon (the change made
    now runs ``count`` for the wait's seconds more); ``None`` when the backlog cannot drain
    within ``AFTER`` or it costs more.

    >>> policy = ThresholdPolicy(capacity=50.0)
    >>> after = Outlook(level=210.0, level_error=20.0, excess=0.0, slope=0.0, variance=120.0**2,
    ...                 backlog=1400.0, running=15, landing=0.0, restart=8.0)
    >>> pricer = Pricer(after, policy.prices)
    >>> put_off = deferral(after, policy, pricer, 7)  # 15 drain 1,400 in 2.6 s
    >>> put_off.operators, round(put_off.wait, 1), put_off.later < put_off.now
    (7, 2.6, True)
    """
    wait = drained(outlook, policy.capacity)
    if not 0.0 < wait < AFTER:
        return None
    later = Pricer(dataclasses.replace(outlook, landing=outlook.landing + wait), pricer.prices)
    now = pricer.terms(count).total + pricer.prices.operator * count * wait
    cost = later.terms(count).total
    return Deferral(count, wait, cost, now) if cost < now else None


def prices_for(outlook: Outlook, policy: ThresholdPolicy) -> Prices:
    """The policy's prices, with the late second's at what the scale-down's restart makes it
    (``ThresholdPolicy.late_price_for``: unstated, it falls where every operation is late)."""
    down = outlook.restart if outlook.restart_down is None else outlook.restart_down
    return Prices(
        policy.capacity,
        policy.latency,
        policy.operator_price,
        policy.late_price_for(down),
        policy.operation_price,
    )


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
    pricer = Pricer(outlook, prices_for(outlook, policy))
    running = outlook.running
    starts = guesses(outlook, policy.capacity)
    # Counts that start no new operation: the running one, and that of a decision partly landed.
    kept = [count for count in dict.fromkeys((running, outlook.pending)) if count is not None]
    if policy.late_probability is None:
        change = cheapest_change(pricer, starts, running)
        unbounded = min((change, *kept), key=lambda count: pricer.terms(count).total)
        bounded = [policy.clamp(change), *(n for n in kept if policy.clamp(n) == n)]
        chosen = min(bounded, key=lambda count: pricer.terms(count).total)
        put_off = None if chosen in kept else deferral(outlook, policy, pricer, chosen)
        if put_off is not None:  # hold until the backlog drains
            unbounded = running if unbounded == chosen else unbounded
            chosen = running
        return Choice(chosen, unbounded, pricer, put_off)
    allowed = policy.late_probability * pricer.horizon
    low = max(starts[0] - 4, 0)
    high = max(starts[1], low + 8)
    # Every count from low to high and the running one, or, past MOST_CANDIDATES of them (a
    # huge backlog, a delay of days), every few: counted, never listed first (a range of
    # millions of counts, listed, held gigabytes).
    many = high - low + 1 + (not low <= running <= high)
    if many > MOST_CANDIDATES:
        step = math.ceil(many / MOST_CANDIDATES)
        counts = {*range(low, max(high, running) + 1, step), *kept, starts[1]}
    else:
        counts = {*range(low, high + 1), *kept}

    def best(candidates: set[int]) -> int:
        """The cheapest within the share, else the least late."""
        within = [n for n in candidates if pricer.terms(n).late_seconds <= allowed]
        if not within:
            return min(candidates, key=lambda n: pricer.terms(n).late_seconds)
        return min(within, key=lambda n: pricer.terms(n).total)

    within_bounds = {policy.clamp(n) for n in counts} - ({running} - {policy.clamp(running)})
    return Choice(best(within_bounds), best(counts), pricer)
