"""Observations built by hand for the baseline policies, without the simulator's queue model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scaling.baselines import Observation


def _observation(
    *,
    operators: int = 10,
    utilisation: float = 0.7,
    capacity: float = 100.0,
    backlog_rate: float = 0.0,
    **fields: Any,
) -> Observation:
    """A consistent snapshot: throughput is what the busy instances process at ``capacity``,
    and the input is the throughput plus the backlog's growth. Any field can be overridden."""
    processed = fields.pop("processed_rate", utilisation * operators * capacity)
    values = {
        "t": 0.0,
        "period": 15.0,
        "operators": operators,
        "arrival_rate": processed + backlog_rate,
        "processed_rate": processed,
        "capacity": capacity,
        "utilisation": utilisation,
        "backlog": 0.0,
        "backlog_rate": backlog_rate,
        "backpressure": 0.0,
    }
    return Observation(**(values | fields))


@pytest.fixture
def observe() -> Callable[..., Observation]:
    """``observe(t=15.0, utilisation=0.9)``: a 10-instance stage at 100 tuples/s per instance,
    70 % busy, no backlog, unless told otherwise."""
    return _observation
