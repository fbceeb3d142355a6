"""scaling.cost: what an operation's restart costs, and a scale-down priced with its own
restart (``Outlook.restart_down``) over the same horizon."""

from __future__ import annotations

import dataclasses

import numpy as np

from scaling.cost import AFTER
from tests.scaling.test_cost import CALM, PRICES, expected_costs


def test_a_longer_restart_raises_the_cost_of_an_operation() -> None:
    outlook = dataclasses.replace(CALM, level=420.0, backlog=2000.0)  # 8 run 400/s: short
    counts = np.array([8, 9, 10, 12])
    costs = [
        expected_costs(dataclasses.replace(outlook, restart=restart), PRICES, counts)
        for restart in (0.0, 8.0, 30.0, 60.0)
    ]
    assert [c.horizon for c in costs] == [AFTER, 8.0 + AFTER, 30.0 + AFTER, 60.0 + AFTER]
    for shorter, longer in zip(costs, costs[1:], strict=False):
        # Every operation is later and dearer; nothing is served during the restart.
        assert np.all(longer.late_seconds[1:] > shorter.late_seconds[1:])
        assert np.all(longer.total[1:] > shorter.total[1:])
    # Without a restart any operation beats holding 8; after a minute's, 9 costs more than
    # holding (its restart's backlog outweighs its 50/s).
    assert costs[0].total[1] < costs[0].total[0] and costs[-1].total[1] > costs[-1].total[0]


def test_a_scale_down_is_priced_with_its_own_restart_over_the_same_horizon() -> None:
    # Over-provisioned, with a backlog to drain: 14 run, 380/s arrive, 3,000 wait.
    outlook = dataclasses.replace(CALM, running=14, backlog=3000.0, restart=25.0, landing=5.0)
    counts = np.array([8, 10, 13, 14, 15, 18])
    same = expected_costs(outlook, PRICES, counts)
    # None and a restart_down equal to the restart are the same model, to the bit.
    assert expected_costs(dataclasses.replace(outlook, restart_down=25.0), PRICES, counts) == same
    quick = expected_costs(dataclasses.replace(outlook, restart_down=0.0), PRICES, counts)
    assert quick.horizon == same.horizon == 5.0 + 25.0 + AFTER
    below = counts < 14
    # Holding and the scale-ups are priced as before; a scale-down that stops nothing is late
    # for fewer seconds, and its count serves (and is paid for) until the same horizon.
    assert quick.rows[3:] == same.rows[3:]
    assert np.all(quick.late_seconds[below] < same.late_seconds[below])
    assert np.array_equal(quick.operator_cost, same.operator_cost)
    assert np.all(quick.total[below] < same.total[below])
    # A restart_down longer than the restart sets the horizon; the scale-ups serve longer
    # after theirs, which stop nothing.
    slow = dataclasses.replace(outlook, restart=0.0, restart_down=25.0)
    slower = expected_costs(slow, PRICES, counts)
    assert slower.horizon == same.horizon
    assert np.all(slower.late_seconds[4:] < same.late_seconds[4:])
    assert np.array_equal(slower.operator_cost, same.operator_cost)
