"""scaling.cost: the expected cost of each count, against a Monte-Carlo, values by hand and
each count priced on its own."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from scaling.cost import AFTER, Pricer, Prices, Terms
from scaling.outlook import Outlook

PRICES = Prices(capacity=50.0, latency=10.0, operator=1.0, late=1000.0, operation=30.0)
CALM = Outlook(
    level=380.0, level_error=0.0, excess=0.0, slope=0.0, variance=3600.0, backlog=0.0,
    running=8, landing=0.0, restart=8.0,
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Costs:
    """The terms of several counts for one outlook, as arrays."""

    horizon: float
    rows: list[Terms]

    def __getattr__(self, name: str) -> np.ndarray:
        return np.array([getattr(row, name) for row in self.rows])


def expected_costs(outlook: Outlook, prices: Prices, counts: np.ndarray) -> Costs:
    pricer = Pricer(outlook, prices)
    return Costs(pricer.horizon, [pricer.terms(int(count)) for count in counts])


# Siegmund's correction: a Gaussian random walk with steps of standard deviation s, reflected
# at 0, exceeds x about as often as the reflected Brownian motion exceeds x + RHO s.
RHO = 0.5826


def seconds_above(x: float, start: float, drift: float, variance: float, seed: int) -> float:
    """Mean seconds within AFTER that a reflected Gaussian random walk (Lindley's recursion,
    steps of 0.1 s) spends above ``x``, over 3,000 paths."""
    dt, paths = 0.1, 3000
    rng = np.random.default_rng(seed)
    step = math.sqrt(variance * dt)
    queue, above = np.full(paths, start), np.zeros(paths)
    threshold = x - RHO * step  # the walk's equivalent of the diffusion's x
    for _ in range(round(AFTER / dt)):
        queue = np.maximum(queue + drift * dt + step * rng.standard_normal(paths), 0.0)
        above += queue > threshold
    return float(above.mean() * dt)


@pytest.mark.parametrize(("level", "backlog"), [(90.0, 0.0), (95.0, 0.0), (90.0, 150.0)])
def test_late_seconds_follow_harrison_s_reflected_queue(level: float, backlog: float) -> None:
    # 10 operators of 10/s hold 90-95/s with sigma 60/s^0.5: late (delay over 1 s) once the
    # queue is over 100, which the noise takes it over about half the time; the horizon's
    # mean queue ends below 100, so there is no terminal term.
    prices = Prices(capacity=10.0, latency=1.0, operator=1.0, late=1.0, operation=0.0)
    outlook = dataclasses.replace(
        CALM, level=level, backlog=backlog, running=10, restart=0.0, variance=3600.0
    )
    late = float(expected_costs(outlook, prices, np.array([10])).late_seconds[0])
    simulated = seconds_above(100.0, backlog, level - 100.0, 3600.0, seed=int(level + backlog))
    assert 0.2 * AFTER < late < 0.9 * AFTER  # a case where the reflection matters
    assert late == pytest.approx(simulated, rel=0.03)


def test_fewer_operators_are_late_more_seconds() -> None:
    # A backlog of 5,000 and a level of 520/s: without a restart, late seconds fall as the count
    # rises, to none once the count drains the backlog within the latency.
    outlook = dataclasses.replace(CALM, level=520.0, backlog=5000.0, restart=0.0, running=10)
    counts = np.arange(8, 22)
    late = expected_costs(outlook, PRICES, counts).late_seconds
    assert np.all(np.diff(late) <= 1e-9) and late[0] > AFTER and late[-1] < 1e-3
    # With an 8 s restart, among the counts an operation would start, the same holds.
    restarting = expected_costs(dataclasses.replace(outlook, restart=8.0), PRICES, counts)
    changed = counts != 10
    assert np.all(np.diff(restarting.late_seconds[changed]) <= 1e-9)


def test_operator_seconds_and_the_operation_are_priced_over_the_same_horizon() -> None:
    outlook = dataclasses.replace(CALM, landing=12.0, restart=8.0)
    prices = dataclasses.replace(PRICES, operator=2.0, operation=30.0)
    costs = expected_costs(outlook, prices, np.array([7, 8, 9]))
    assert costs.horizon == 12.0 + 8.0 + AFTER
    # The 8 running until an operation lands, the count from its restart on; 8 throughout.
    assert costs.operator_cost.tolist() == [
        2.0 * (8 * 12.0 + 7 * (8.0 + AFTER)),
        2.0 * 8 * costs.horizon,
        2.0 * (8 * 12.0 + 9 * (8.0 + AFTER)),
    ]
    assert costs.operation_cost.tolist() == [30.0, 0.0, 30.0]
    assert np.allclose(
        costs.total,
        costs.operator_cost + costs.late_cost + costs.operation_cost + costs.correction_cost,
    )
    assert np.allclose(costs.late_cost, 1000.0 * costs.late_seconds)
    row = costs.rows[2].to_dict()
    assert row["operators"] == 9 and row["operation_cost"] == 30.0
    assert row["total"] == round(float(costs.total[2]), 3)


def test_the_terminal_term_prices_the_backlog_left_at_the_horizon() -> None:
    # 12 operators of 10/s against 100/s drain a backlog of 10,000 at 20/s: still 4,000 at the
    # horizon (300 s), 2,800 over the 1,200 a 10 s latency allows, late 140 s more. Late the
    # whole horizon too (the backlog stays over 1,200 until t = 440 s).
    prices = Prices(capacity=10.0, latency=10.0, operator=1.0, late=1.0, operation=0.0)
    draining = Outlook(
        level=100.0, level_error=0.0, excess=0.0, slope=0.0, variance=1.0, backlog=10_000.0,
        running=12, landing=0.0, restart=0.0,
    )  # fmt: skip
    late = expected_costs(draining, prices, np.array([12])).late_seconds[0]
    assert late == pytest.approx(AFTER + 140.0, abs=0.01)
    # More backlog left: 22,800 over the latency's at the horizon, 6,000 drained in AFTER s
    # after it (late throughout), and the 16,800 still left then take at least 140 s at the
    # count's 120/s: never a cap, so that a count further behind always costs more.
    deeper = dataclasses.replace(draining, backlog=30_000.0)
    assert expected_costs(deeper, prices, np.array([12])).late_seconds[0] == pytest.approx(
        2 * AFTER + 140.0, abs=0.01
    )
    # Short of the level (90/s against 100/s): 13,000 - 900 over at the horizon, 3,000 more
    # after AFTER s, served at 90/s. Fewer operators, further behind, later.
    short = dataclasses.replace(draining, running=9)
    behind = expected_costs(short, prices, np.array([9])).late_seconds[0]
    assert behind == pytest.approx(2 * AFTER + (12_100.0 + 3_000.0) / 90.0, abs=0.01)
    shorter = dataclasses.replace(draining, running=6)
    assert expected_costs(shorter, prices, np.array([6])).late_seconds[0] > behind + 100.0
    # A backlog drained within the horizon leaves nothing to price.
    light = dataclasses.replace(draining, backlog=3000.0)
    assert expected_costs(light, prices, np.array([12])).late_seconds[0] < AFTER


def test_a_pending_decision_s_landing_is_waited_for_on_the_running_count() -> None:
    # 8 run 400/s against 440/s: each second until an operation lands adds 40 to the backlog
    # it finds; the later it lands, the more late seconds it costs.
    outlook = dataclasses.replace(CALM, level=440.0, backlog=3500.0, restart=0.0)
    late = [
        expected_costs(
            dataclasses.replace(outlook, landing=landing), PRICES, np.array([10])
        ).late_seconds[0]
        for landing in (0.0, 10.0, 30.0, 60.0)
    ]
    assert late == sorted(late) and late[-1] > late[0] + 30.0
    # Landing at once on a backlog 10 drains within the latency: never late.
    assert late[0] < 1e-3


def test_the_rest_of_a_decision_partly_landed_costs_no_restart_and_no_operation() -> None:
    # 5 of a decided 6 run with 5,600 waiting (real Spark, session 27): the sixth is the rest
    # of that operation. Priced as a new one, its 8.5 s stall made it dearer than holding 5,
    # which could not keep up.
    spark = Prices(capacity=100.0, latency=10.0, operator=1.0, late=1000.0, operation=30.0)
    outlook = Outlook(
        level=375.0, level_error=30.0, excess=60.0, slope=0.0, variance=100.0**2,
        backlog=5600.0, running=5, landing=2.0, restart=8.5, pending=6,
    )  # fmt: skip
    as_new = Pricer(dataclasses.replace(outlook, pending=None), spark)
    rest = Pricer(outlook, spark)
    assert as_new.terms(6).total > as_new.terms(5).total  # before: 5 held
    assert rest.terms(6).total < rest.terms(5).total  # the rest of the operation lands
    assert rest.terms(6).operation_cost == 0.0 and rest.terms(7).operation_cost == 30.0
    assert rest.terms(6).late_seconds < as_new.terms(6).late_seconds
    # The same operator-seconds: 5 until it lands, 6 from then to the horizon.
    assert (
        rest.terms(6).operator_cost == as_new.terms(6).operator_cost == 5 * 2.0 + 6 * (8.5 + AFTER)
    )
    # Every other count, holding included, is priced as before.
    for count in (4, 5, 7, 12):
        assert rest.terms(count) == as_new.terms(count)
    # Without a restart it is a new operation's terms but its price, float for float.
    instant = dataclasses.replace(outlook, restart=0.0)
    joined, new = (
        Pricer(instant, spark).terms(6),
        Pricer(dataclasses.replace(instant, pending=None), spark).terms(6),
    )
    assert joined._replace(operation_cost=30.0, total=joined.total + 30.0) == new
    # Its least cost (for the search) is no more than its total.
    assert rest.least(6) <= rest.terms(6).total and rest.least(6) == as_new.least(6) - 30.0


def test_a_rising_level_is_followed_until_an_operation_can_land() -> None:
    # Holding 8 (400/s) on a level of 380/s rising 2/s per second: the rise is followed for
    # the 20 s an operation takes to land (landing + restart), then stays at 420/s: later than
    # with no slope, and a falling level is taken as flat.
    outlook = dataclasses.replace(CALM, landing=12.0, restart=8.0)
    flat, rising, falling = (
        expected_costs(dataclasses.replace(outlook, slope=slope), PRICES, np.array([8, 9]))
        for slope in (0.0, 2.0, -2.0)
    )
    assert rising.late_seconds[0] > flat.late_seconds[0] + 10.0
    assert np.allclose(falling.total, flat.total)


def test_an_excess_over_the_level_fades_and_costs_late_seconds_while_it_lasts() -> None:
    outlook = dataclasses.replace(CALM, level=390.0, backlog=3000.0, restart=0.0)
    calm = expected_costs(outlook, PRICES, np.array([8])).late_seconds[0]
    burst = expected_costs(dataclasses.replace(outlook, excess=100.0), PRICES, np.array([8]))
    assert burst.late_seconds[0] > calm


def test_the_level_s_uncertainty_makes_a_tight_count_later() -> None:
    # 8 hold 400/s at a level of 398/s with 3,800 waiting, 200 under the latency's 4,000.
    outlook = dataclasses.replace(CALM, level=398.0, backlog=3800.0)
    sure = expected_costs(outlook, PRICES, np.array([8])).late_seconds[0]
    unsure = expected_costs(dataclasses.replace(outlook, level_error=20.0), PRICES, np.array([8]))
    assert unsure.late_seconds[0] > sure + 5.0


def test_costs_are_finite_at_the_edges() -> None:
    for outlook in (
        dataclasses.replace(CALM, variance=0.0, level=0.0, running=0),
        dataclasses.replace(CALM, backlog=1e15, level=1e9, variance=1e12),
        dataclasses.replace(CALM, landing=900.0, restart=900.0),
    ):
        costs = expected_costs(outlook, PRICES, np.array([0, 1, 8, 1000]))
        assert np.all(np.isfinite(costs.total)) and np.all(costs.late_seconds >= 0.0)


def test_the_correction_is_the_chance_the_level_crosses_the_count_s_capacity() -> None:
    # A level that wanders as a random walk of 12 (records/s)^2 per second from 380/s: the
    # share of 4,000 paths (1 s steps) whose maximum within AFTER reaches each count's capacity
    # is the chance a later operation must correct that count (reflection principle).
    outlook = dataclasses.replace(CALM, wander=12.0)
    pricer = Pricer(outlook, PRICES)
    rng = np.random.default_rng(30)
    paths = 380.0 + np.cumsum(rng.normal(0.0, math.sqrt(12.0), (4000, int(AFTER))), axis=1)
    highest = paths.max(axis=1)
    for count in (8, 9, 10, 11):
        walked = float(np.mean(highest >= count * 50.0))
        # A walk of whole-second steps overshoots less than the continuous path: within 0.04.
        assert pricer.terms(count).correction == pytest.approx(walked, abs=0.04)
    assert pricer.terms(7).correction == 1.0  # 350/s against 380/s: corrected for sure
    chances = [pricer.terms(n).correction for n in range(7, 20)]
    assert all(a >= b for a, b in zip(chances, chances[1:], strict=False))


def test_a_correction_costs_an_operation_and_the_late_seconds_one_brings() -> None:
    certain = dataclasses.replace(CALM, level=420.0, restart=25.0)  # 8 cannot serve 420/s
    # Without a measurement: the restart's 15 s over the 10 s latency.
    terms = Pricer(certain, PRICES).terms(8)
    assert terms.correction == 1.0 and terms.correction_cost == 30.0 + 1000.0 * 15.0
    measured = Pricer(dataclasses.replace(certain, operation_late=4.0), PRICES).terms(8)
    assert measured.correction_cost == 30.0 + 1000.0 * 4.0
    # The level's own error adds to its wander: a level known worse is likelier to be wrong.
    sure = Pricer(dataclasses.replace(CALM, wander=1.0), PRICES).terms(9)
    unsure = Pricer(dataclasses.replace(CALM, wander=1.0, level_error=20.0), PRICES).terms(9)
    assert 0.0 < sure.correction < unsure.correction < 1.0
    assert sure.to_dict()["correction"] == round(sure.correction, 4)
