"""The contract every registered filter keeps (filters/base.py), checked on each of them.

A filter added to the registry without representative parameters here fails
``test_every_filter_is_covered``, so no filter escapes the suite.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from filters import Denoiser, available_filters, make_filter

REPRESENTATIVE: dict[str, list[dict[str, object]]] = {
    "changepoint": [{}, {"resolution": 50.0}, {"resolution": 5.0, "threshold": 4.0, "memory": 20}],
    "raw": [{}],
    "moving_average": [{}, {"w": 1}, {"w": 30}],
    "moving_median": [{}, {"w": 1}, {"w": 2}, {"w": 7}],
    "ewma": [{}, {"alpha": 1.0}, {"alpha": 0.02}],
    "tvd": [
        {"lam": 300.0},
        {"lam": 0.0},
        {"lam": 5.0},
        {"lam": 300.0, "method": "mm", "window": 40, "iterations": 30},
        {"lam": 300.0, "method": "mm", "iterations": 20},
        {},
        {"lam": "auto", "lam_per_sigma": 2.5},
    ],
    "ekf": [
        {},
        {"measurement_noise": 2500.0, "process_noise": 0.5},
        {"observation": "log"},
    ],
}

CASES = [
    pytest.param(name, params, id=f"{name}:{json.dumps(params, sort_keys=True)}")
    for name in sorted(REPRESENTATIVE)
    for params in REPRESENTATIVE[name]
]


def noisy_steps(n: int = 240, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    trend = np.repeat(rng.uniform(200.0, 500.0, n // 60 + 1), 60)[:n]
    return np.clip(trend + rng.normal(0.0, 60.0, n), 0.0, None)


def test_every_filter_is_covered() -> None:
    assert sorted(REPRESENTATIVE) == available_filters()


@pytest.mark.parametrize(("name", "params"), CASES)
def test_batch_equals_streaming(name: str, params: dict[str, object]) -> None:
    xs = noisy_steps()
    f = make_filter(name, **params)
    streamed = [f.update(x) for x in xs]
    assert all(type(value) is float for value in streamed)
    batch = make_filter(name, **params).filter(xs)
    assert isinstance(batch, np.ndarray) and batch.shape == xs.shape
    np.testing.assert_array_equal(batch, np.array(streamed))


# Filters whose samples weigh the intervals they cover (Denoiser.weighed); the others count them.
WEIGHS = {"changepoint"}


@pytest.mark.parametrize(("name", "params"), CASES)
def test_a_sample_of_weight_one_is_a_sample_and_weighed_ones_travel_in_the_state(
    name: str, params: dict[str, object]
) -> None:
    xs = noisy_steps().tolist()
    counted, weighed = make_filter(name, **params), make_filter(name, **params)
    assert [weighed.weighed(x, 1.0) for x in xs] == [counted.update(x) for x in xs]
    weights = [1.0, 0.5, 6.0, 1.5] * (len(xs) // 4)
    original = make_filter(name, **params)
    outputs = [original.weighed(x, w) for x, w in zip(xs[:101], weights, strict=False)]
    if name not in WEIGHS:  # a filter that counts samples takes any weight as one
        assert outputs == make_filter(name, **params).filter(xs[:101]).tolist()
    restored = make_filter(name, **params)
    restored.load_state_dict(json.loads(json.dumps(original.state_dict(), allow_nan=False)))
    rest = list(zip(xs[101:], weights[101:], strict=False))
    assert [restored.weighed(x, w) for x, w in rest] == [original.weighed(x, w) for x, w in rest]


@pytest.mark.parametrize(("name", "params"), CASES)
def test_causal(name: str, params: dict[str, object]) -> None:
    xs = noisy_steps()
    full = make_filter(name, **params).filter(xs)
    for cut in (1, 2, 17, 120, len(xs) - 1):
        prefix = make_filter(name, **params).filter(xs[:cut])
        np.testing.assert_array_equal(prefix, full[:cut])


@pytest.mark.parametrize(("name", "params"), CASES)
def test_state_round_trip_through_json_continues_identically(
    name: str, params: dict[str, object]
) -> None:
    xs = noisy_steps()
    for cut in (0, 1, 3, 101):
        original = make_filter(name, **params)
        original.filter(xs[:cut])
        saved = json.loads(json.dumps(original.state_dict(), allow_nan=False))
        restored = make_filter(json.loads(json.dumps(original.spec)))
        restored.load_state_dict(saved)
        np.testing.assert_array_equal(restored.filter(xs[cut:]), original.filter(xs[cut:]))


@pytest.mark.parametrize(("name", "params"), CASES)
def test_constant_input_gives_constant_output(name: str, params: dict[str, object]) -> None:
    for level in (0.0, 1.0, 350.0, 12345.678):
        out = make_filter(name, **params).filter(np.full(200, level))
        np.testing.assert_allclose(out[20:], level, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("name", "params"), CASES)
def test_reset_forgets_everything(name: str, params: dict[str, object]) -> None:
    xs = noisy_steps()
    f = make_filter(name, **params)
    first = f.filter(xs)
    f.reset()
    np.testing.assert_array_equal(f.filter(xs), first)


@pytest.mark.parametrize(("name", "params"), CASES)
def test_spec_round_trips(name: str, params: dict[str, object]) -> None:
    f = make_filter(name, **params)
    assert f.spec["name"] == name
    assert {key: f.spec[key] for key in params} == params
    assert make_filter(f.spec).spec == f.spec
    assert isinstance(f, Denoiser)


@pytest.mark.parametrize(("name", "params"), CASES)
def test_bad_samples_are_refused_and_change_nothing(name: str, params: dict[str, object]) -> None:
    xs = noisy_steps()
    f = make_filter(name, **params)
    f.filter(xs[:50])
    before = json.dumps(f.state_dict())
    for bad in (float("nan"), float("inf"), "12", None, True):
        with pytest.raises(ValueError, match="x=.* is not allowed"):
            f.update(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"xs\[2\]=nan"):
        f.filter([300.0, 310.0, float("nan")])
    assert json.dumps(f.state_dict()) == before


@pytest.mark.parametrize("name", sorted(REPRESENTATIVE))
def test_invalid_parameters_are_refused_with_a_clear_message(name: str) -> None:
    base = REPRESENTATIVE[name][0]
    for param in type(make_filter(name, **base)).parameters():
        for bad in (float("nan"), -1.0, "bogus", True):
            with pytest.raises(ValueError) as error:
                make_filter(name, **{**base, param: bad})
            message = str(error.value)
            assert f"{param}={bad!r}" in message and "allowed" in message, message


def test_unknown_names_and_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match=r"name='kalman' is not a filter; allowed names: \["):
        make_filter("kalman")
    with pytest.raises(ValueError, match=r"moving_average: unknown parameter 'window'"):
        make_filter("moving_average", window=3)
    with pytest.raises(ValueError, match="has no 'name'"):
        make_filter({"w": 3})
    with pytest.raises(ValueError, match="not both"):
        make_filter({"name": "ewma"}, alpha=0.5)


def test_state_from_another_configuration_is_refused() -> None:
    state = make_filter("moving_average", w=3).state_dict()
    other = make_filter("moving_average", w=4)
    other.update(5.0)
    with pytest.raises(ValueError, match="state was taken from"):
        other.load_state_dict(state)
    broken = {"spec": other.spec, "state": {"_unknown": 1}}
    with pytest.raises(ValueError, match="state fields"):
        other.load_state_dict(broken)
    assert other.update(7.0) == 6.0
