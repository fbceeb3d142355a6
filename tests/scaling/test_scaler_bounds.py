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


# A policy's stated times and prices at the service's bounds (service/request_bodies.py:
# latency from 1e-3 s, restart and delay to MAX_SECONDS, prices from MIN_PRICE to MAX_PRICE,
# late_probability from MIN_RISK).
POLICY = st.fixed_dictionaries(
    {},
    optional={
        "latency": st.sampled_from([1e-3, 1.0, 10.0, 1e9]),
        "restart": st.sampled_from([0.0, 8.0, 60.0, 1e9]),
        "delay": st.sampled_from([0.0, 30.0, 1e9]),
        "operator_price": st.sampled_from([1e-6, 1.0, 1e12]),
        "late_price": st.sampled_from([0.0, 1e-6, 1000.0, 1e12]),
        "operation_price": st.sampled_from([0.0, 30.0, 1e12]),
        "min_operators": st.sampled_from([0, 1, 10]),
        "max_operators": st.sampled_from([1, 20, 1_000_000_000]),
    },
)


@settings(max_examples=500, deadline=None)
@given(
    stated=POLICY,
    late_probability=st.none() | st.sampled_from([1e-12, 0.01, 1.0]),
    capacity=st.sampled_from(CAPACITIES),
    samples=st.lists(SAMPLE, min_size=1, max_size=6),
)
def test_every_stated_policy_within_the_service_s_bounds_decides(
    stated: dict[str, float],
    late_probability: float | None,
    capacity: float,
    samples: list[tuple[float, float, float | None, int | None, float | None]],
) -> None:
    policy: dict[str, float | None] = {"capacity": capacity, **stated}
    if stated.get("min_operators", 0) > stated.get("max_operators", math.inf):
        policy["min_operators"] = stated["max_operators"]  # the bounds in order
    if late_probability is not None:  # either a price or a probability (not both)
        policy.pop("late_price", None)
        policy["late_probability"] = late_probability
    scaler = Scaler.from_spec({"policy": policy}, operators=5)
    t = 0.0
    for step, volume, backlog, running, processed in samples:
        if not t + max(step, 1e-9) > t:
            break  # a step lost in t's rounding: refused as such (the first property)
        t += max(step, 1e-9)
        decision = scaler.observe(volume, t, backlog=backlog, running=running, processed=processed)
        assert type(decision.operators) is int and decision.operators >= 0
        assert math.isfinite(decision.filtered)


# Guards at the edges of what they take (scaling/guards: seconds and shares from 0, steps from 1).
GUARDS = st.lists(
    st.sampled_from(
        [
            {"name": "confidence", "up": 0.0, "down": 0.0},
            {"name": "confidence", "up": 1e9, "down": 1e12},
            {"name": "cooldown", "up": 0.0, "down": 1e9},
            {"name": "cooldown", "up": 1e-9, "down": 300.0},
            {"name": "hysteresis", "band": 0.0},
            {"name": "hysteresis", "band": 0.999},
            {"name": "max_step", "up": 1, "down": 1},
            {"name": "max_step", "up": 1_000_000_000},
            {"name": "stabilization", "window": 0.0},
            {"name": "stabilization", "window": 1e15},
        ]
    ),
    max_size=3,
    unique_by=lambda guard: guard["name"],
)


@settings(max_examples=500, deadline=None)
@given(
    guards=GUARDS,
    capacity=st.sampled_from(CAPACITIES),
    samples=st.lists(SAMPLE, min_size=1, max_size=6),
)
def test_every_guard_at_its_edges_decides(
    guards: list[dict[str, object]],
    capacity: float,
    samples: list[tuple[float, float, float | None, int | None, float | None]],
) -> None:
    spec = {"policy": {"capacity": capacity, "min_operators": 1}, "guards": guards}
    scaler = Scaler.from_spec(spec, operators=5)
    t = 0.0
    for step, volume, backlog, running, processed in samples:
        if not t + step > t:
            break  # a step lost in t's rounding: refused as such (the first property)
        t += step
        decision = scaler.observe(volume, t, backlog=backlog, running=running, processed=processed)
        assert type(decision.operators) is int and decision.operators >= 1
        assert math.isfinite(decision.filtered)
