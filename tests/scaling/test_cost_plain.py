"""scaling.cost's Pricer against the model worked out plainly for one count at a time: the
intervals, the arrivals and the terms recomputed as the module's docstring reads them."""

from __future__ import annotations

import math
import random

from scaling.cost import AFTER, EXCESS, Pricer, Prices
from scaling.late import NEGLIGIBLE, log_ndtr
from scaling.outlook import Outlook
from tests.scaling.test_late import integral


def arrived(outlook: Outlook, t: float, ahead: float) -> float:
    slope = max(outlook.slope, 0.0)
    along = t * t / 2.0 if t <= ahead else ahead * ahead / 2.0 + ahead * (t - ahead)
    return outlook.level * t + slope * along + outlook.excess * EXCESS * -math.expm1(-t / EXCESS)


def rate(outlook: Outlook, t: float, ahead: float) -> float:
    slope = max(outlook.slope, 0.0)
    return outlook.level + slope * min(t, ahead) + outlook.excess * math.exp(-t / EXCESS)


def plain_terms(outlook: Outlook, prices: Prices, operators: int) -> tuple[float, ...]:
    """A count's terms worked out from the outlook at once, interval by interval, as the model
    reads (scaling.cost's docstring): what the Pricer shares across counts, recomputed."""
    c, latency = prices.capacity, prices.latency
    variance = max(outlook.variance, 1e-12 * c * c)
    landing, restart, n0 = outlook.landing, outlook.restart, outlook.running
    ahead = landing + restart
    horizon = ahead + AFTER
    edges = [0.0, *([landing / 2.0, landing] if landing > 0.0 else [])]
    kinds = ["delay"] * (len(edges) - 1)
    if restart > 0.0:
        edges += [landing + restart / 2.0, ahead]
        kinds += ["restart"] * 2
    edges += [ahead + AFTER * share for share in (0.05, 0.15, 0.35, 0.65, 1.0)]
    kinds += ["after"] * 5
    held, capacity = n0 * c, operators * c
    holding = operators == n0
    found = max(outlook.backlog + arrived(outlook, landing, ahead) - held * landing, 0.0)
    late = 0.0
    for index, kind in enumerate(kinds):
        low, high = edges[index], edges[index + 1]
        middle = (low + high) / 2.0
        if holding or kind == "delay":  # the running count, from the backlog there is now
            served, base, origin = held, outlook.backlog, 0.0
            x_low = x_high = latency * held
        elif kind == "restart":  # nothing served; the pause left delays every record
            served, base, origin = 0.0, found - arrived(outlook, landing, ahead), 0.0
            x_low, x_high = (latency - ahead + low) * capacity, (latency - ahead + high) * capacity
        else:  # the new count, from the backlog the restart ends with
            served, base, origin = capacity, found - arrived(outlook, landing, ahead), ahead
            x_low = x_high = latency * capacity
        m_low = base + arrived(outlook, low, ahead) - served * (low - origin)
        m_high = base + arrived(outlook, high, ahead) - served * (high - origin)
        error = outlook.level_error**2 * min(middle, ahead + EXCESS) ** 2
        spread = math.sqrt(variance * middle + error) + 1e-9 * c
        late += (high - low) * integral((x_low - m_low) / spread, (x_high - m_high) / spread)
        if kind == "restart" and not holding:
            continue
        exponent = 2.0 * (rate(outlook, middle, ahead) - served) * x_low / variance
        if exponent < NEGLIGIBLE:
            continue
        m_middle = base + arrived(outlook, middle, ahead) - served * (middle - origin)
        exponent += log_ndtr((-x_low - m_middle) / spread)
        late += (high - low) * math.exp(min(exponent, 0.0))
    late = min(late, horizon)
    by_horizon = arrived(outlook, horizon, ahead)
    if holding:
        left = outlook.backlog + by_horizon - held * horizon
        operator_seconds, operation, final = n0 * horizon, 0.0, held
    else:
        left = found + by_horizon - arrived(outlook, landing, ahead) - capacity * AFTER
        operator_seconds = n0 * landing + operators * (restart + AFTER)
        operation, final = prices.operation, capacity
    over = left - latency * final
    if over > 0.0:
        spare = final - rate(outlook, horizon, ahead)
        drained = min(over / spare, AFTER) if spare > 0.0 else AFTER
        still = over - spare * drained  # what AFTER s at the spare capacity leave
        late += drained + (still / max(final, c) if drained == AFTER else 0.0)
    operator_cost, late_cost = prices.operator * operator_seconds, prices.late * late
    # A later operation corrects the count when the level crosses its capacity within AFTER.
    gap = final - rate(outlook, horizon, ahead)
    wander = math.sqrt(2.0 * (outlook.level_error**2 + max(outlook.wander, 0.0) * AFTER))
    correction = math.erfc(gap / (wander + 1e-9 * c)) if gap > 0.0 else 1.0
    late_after = outlook.operation_late
    if late_after is None:
        late_after = max(restart - latency, 0.0)
    correction_cost = correction * (prices.operation + prices.late * late_after)
    total = operator_cost + late_cost + operation + correction_cost
    return operators, operator_cost, late, late_cost, operation, correction, correction_cost, total


def test_the_pricer_gives_the_floats_of_each_count_priced_on_its_own() -> None:
    # Worked out once per outlook or per count, the same operations in the same order: the
    # decisions and records of earlier versions stay as they were, bit for bit.
    rng = random.Random(30)
    for _ in range(600):
        c = rng.choice([10.0, 50.0, 123.4])
        outlook = Outlook(
            level=rng.uniform(0.0, 40.0) * c,
            level_error=rng.choice([0.0, rng.uniform(0.0, 3.0) * c]),
            excess=rng.choice([0.0, rng.uniform(-2.0, 2.0) * c]),
            slope=rng.choice([0.0, rng.uniform(-5.0, 5.0)]),
            variance=rng.choice([0.0, rng.uniform(0.0, 10.0) * c * c, rng.uniform(0, 1e3) * c * c]),
            backlog=rng.choice([0.0, rng.uniform(0.0, 100.0) * c, rng.uniform(0.0, 1e5) * c]),
            running=rng.randint(0, 50),
            landing=rng.choice([0.0, rng.uniform(0.0, 200.0)]),
            restart=rng.choice([0.0, rng.uniform(0.0, 90.0)]),
            wander=rng.choice([0.0, rng.uniform(0.0, 0.1) * c * c]),
            operation_late=rng.choice([None, 0.0, rng.uniform(0.0, 60.0)]),
        )
        prices = Prices(c, rng.choice([1.0, 10.0, rng.uniform(0.5, 60.0)]), 1.0, 50.0, 30.0)
        pricer = Pricer(outlook, prices)
        running = outlook.running
        for count in {0, running, running + 1, max(running - 1, 0), rng.randint(0, 200)}:
            assert tuple(pricer.terms(count)) == plain_terms(outlook, prices, count)
