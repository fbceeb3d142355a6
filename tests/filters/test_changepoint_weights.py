"""changepoint: samples that cover more than the stream's typical interval weigh more
(``Denoiser.weighed``), and states from before weights load as samples of weight 1."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from filters.changepoint import ChangePoint
from filters.changepoint_state import UNREAD


def noisy(level: float, sigma: float, n: int, seed: int) -> list[float]:
    values = level + np.random.default_rng(seed).normal(0.0, sigma, n)
    return np.clip(values, 0.0, None).tolist()


SERIES = noisy(300.0, 30.0, 300, 1) + noisy(420.0, 30.0, 200, 2) + [0.0, 900.0]


def test_a_weight_of_one_is_a_sample_bit_for_bit() -> None:
    counted, weighed = ChangePoint(resolution=50.0), ChangePoint(resolution=50.0)
    assert [weighed.weighed(x, 1.0) for x in SERIES] == [counted.update(x) for x in SERIES]
    assert weighed.spread == counted.spread and weighed.noise == counted.noise


def first_at(level: float, outputs: list[float]) -> int:
    return next(i for i, out in enumerate(outputs) if abs(out - level) < 30.0)


def test_samples_that_cover_five_intervals_declare_a_change_five_times_sooner() -> None:
    # At the resolution 50 with noise of 10, the allowance is capped at outlier / 2 = 1.5, so
    # a change is declared once 25 / 1.5 samples' worth of clipped residuals are in: the 17th
    # sample counted one by one, the 4th of samples that each cover five intervals.
    steady, after = noisy(300.0, 10.0, 200, 3), noisy(420.0, 10.0, 30, 4)
    counted, weighed = ChangePoint(resolution=50.0), ChangePoint(resolution=50.0)
    for x in steady:
        counted.update(x)
        weighed.update(x)
    assert first_at(420.0, [counted.update(x) for x in after]) == 16
    assert first_at(420.0, [weighed.weighed(x, 5.0) for x in after]) == 3


def test_no_single_sample_declares_a_change_however_long_it_covers() -> None:
    f = ChangePoint(resolution=50.0)
    level = f.filter(noisy(300.0, 10.0, 200, 5))[-1]
    # threshold / outlier = 8.3 intervals at most: 8.3 x (3 - 1.5) = 12.5 of the 25 needed.
    assert f.weighed(5000.0, 1e6) == level
    assert f.weighed(300.0, 1.0) == pytest.approx(level, abs=1.0)


def test_a_noise_estimate_from_long_samples_is_that_of_typical_ones() -> None:
    # Means over 4 intervals carry half the deviation; their differences are scaled back.
    rng = np.random.default_rng(6)
    f = ChangePoint()
    for _ in range(600):
        f.weighed(float(500.0 + rng.normal(0.0, 40.0 / math.sqrt(4.0))), 4.0)
    assert f.noise == pytest.approx(40.0, rel=0.1)


@pytest.mark.parametrize("weight", [0.0, -1.0, math.nan, math.inf, "2", None, True])
def test_a_weight_that_is_not_a_number_over_0_is_refused_and_changes_nothing(
    weight: object,
) -> None:
    f = ChangePoint(resolution=50.0)
    f.filter(SERIES[:50])
    before = json.dumps(f.state_dict())
    with pytest.raises(ValueError, match=r"weight=.* is not allowed: weight must be a number > 0"):
        f.weighed(300.0, weight)  # type: ignore[arg-type]
    assert json.dumps(f.state_dict()) == before


def test_a_state_from_before_weights_loads_as_samples_of_weight_one() -> None:
    f = ChangePoint(resolution=50.0)
    f.filter(SERIES[:400])
    state = json.loads(json.dumps(f.state_dict()))
    old = {k: v for k, v in state["state"].items() if k != "_recent_weights"}
    old.update(dict.fromkeys(UNREAD, 0.0))  # what states then kept, and no step read
    loaded = ChangePoint(resolution=50.0)
    loaded.load_state_dict({"spec": state["spec"], "state": old})
    assert loaded.state_dict() == state
    rest = SERIES[400:]
    assert [loaded.update(x) for x in rest] == [f.update(x) for x in rest]
    # Half a mapping is no state at all: refused, naming the fields.
    with pytest.raises(ValueError, match="state fields"):
        ChangePoint(resolution=50.0).load_state_dict(
            {"spec": state["spec"], "state": {**old, "_recent_weights": [1.0] * 64}}
        )
