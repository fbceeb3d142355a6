"""A Scaler takes whatever the service's bounds let through (``service.bounds``): any filter,
samples at the edges of floats, intervals from 5e-324 s to 1e14 s, and decides each one.

The edges come from what fuzzing found (session 29): a level that moved within 1e-300 s made
the wander inf and the cost model's terms NaN, and a sample 1e15 s after samples 1e-300 s
apart weighed inf. Both were a 422 on a batch within every bound.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from filters import available_filters
from scaling import Scaler

# The service's bounds (service/bounds.py: MAX_VOLUME, MAX_BACKLOG, MAX_ABS_T, MIN_CAPACITY,
# MAX_CAPACITY, MAX_OPERATORS), and values at the edges of doubles within them.
VOLUMES = [0.0, 5e-324, 1e-300, 1.0, 300.0, 1e6, 1e9, 1e12]
BACKLOGS = [0.0, 1.0, 1e6, 1e12, 1e15]
RUNNING = [0, 1, 5, 1000, 1_000_000_000]
STEPS = [5e-324, 1e-300, 1e-9, 1.0, 1e6, 1e14]
CAPACITIES = [1e-3, 1.0, 50.0, 1e12]


SAMPLE = st.tuples(
    st.sampled_from(STEPS),
    st.sampled_from(VOLUMES),
    st.none() | st.sampled_from(BACKLOGS),
    st.none() | st.sampled_from(RUNNING),
    st.none() | st.sampled_from(VOLUMES),
)
FILTERS = st.sampled_from(
    [{"name": name} for name in available_filters()] + [{"name": "ekf", "observation": "log"}]
)


@settings(max_examples=1000, deadline=None)
@given(
    spec=FILTERS,
    capacity=st.sampled_from(CAPACITIES),
    start=st.sampled_from([-1e15, 0.0, 3e14]),
    samples=st.lists(SAMPLE, min_size=1, max_size=7),
)
def test_every_sample_within_the_service_s_bounds_is_decided(
    spec: dict[str, str],
    capacity: float,
    start: float,
    samples: list[tuple[float, float, float | None, int | None, float | None]],
) -> None:
    scaler = Scaler.from_spec({"filter": spec, "policy": {"capacity": capacity}}, operators=5)
    t, last = start, None
    for step, volume, backlog, running, processed in samples:
        t += step
        if t > 1e15 or (last is not None and not t > last):
            break  # past the bound, or a step lost in t's rounding: refused as such
        decision = scaler.observe(volume, t, backlog=backlog, running=running, processed=processed)
        assert type(decision.operators) is int and decision.operators >= 0
        assert math.isfinite(decision.filtered)
        last = t
