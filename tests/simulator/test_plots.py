"""Timeline figures: raw and filtered volume over time, and the operators each filter ran."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from filters import make_filter
from scaling import Scaler, ThresholdPolicy
from simulator import SimulationResult, add_noise, paper_workload, simulate
from simulator.output.figures import plot_filtered, plot_timeline

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def runs(noisy: np.ndarray, trend: np.ndarray | None = None) -> dict[str, SimulationResult]:
    return {
        spec["name"]: simulate(
            Scaler(make_filter(spec), ThresholdPolicy(capacity=50.0), operators=7),
            noisy,
            trend=trend,
        )
        for spec in ({"name": "raw"}, {"name": "tvd", "lam": 800.0})
    }


@pytest.mark.parametrize("with_trend", [True, False])
def test_timeline_of_two_runs_is_a_png(tmp_path: Path, with_trend: bool) -> None:
    trend = paper_workload(seed=3, duration=400)
    noisy = add_noise(trend, snr=5.0, seed=4)
    path = tmp_path / "timeline.png"
    given = trend if with_trend else None
    written = plot_timeline(path, runs(noisy, given), title="two runs", trend=given, capacity=50)
    assert written == path
    assert path.read_bytes().startswith(PNG_SIGNATURE)
    assert path.stat().st_size > 10_000  # two panels of lines, not an empty canvas


def test_timeline_refuses_runs_over_different_samples(tmp_path: Path) -> None:
    trend = paper_workload(seed=3, duration=100)
    mixed = runs(add_noise(trend, snr=5.0, seed=1)) | {"other": runs(trend)["raw"]}
    with pytest.raises(ValueError, match="run 'other' is not over the same samples"):
        plot_timeline(tmp_path / "mixed.png", mixed)
    with pytest.raises(ValueError, match="runs is empty"):
        plot_timeline(tmp_path / "none.png", {})
    assert not list(tmp_path.iterdir())


def test_filtered_series_is_a_png(tmp_path: Path) -> None:
    trend = paper_workload(seed=3, duration=200)
    noisy = add_noise(trend, snr=5.0, seed=4)
    outputs = {"raw": noisy, "ewma": make_filter("ewma", alpha=0.1).filter(noisy)}
    path = plot_filtered(tmp_path / "filtered.png", np.arange(200.0), noisy, outputs, trend=trend)
    assert path.read_bytes().startswith(PNG_SIGNATURE)


def test_a_long_series_with_dates_is_drawn_per_bin_beside_an_excerpt(tmp_path: Path) -> None:
    trend = paper_workload(seed=3, duration=6000)
    noisy = add_noise(trend, snr=5.0, seed=4)
    dates = np.datetime64("2014-07-01T00:00") + np.arange(6000) * np.timedelta64(30, "m")
    path = plot_timeline(tmp_path / "long.png", runs(noisy, trend), trend=trend, capacity=50,
                         dates=dates, unit="passengers")  # fmt: skip
    assert path.read_bytes().startswith(PNG_SIGNATURE)
    with pytest.raises(ValueError, match="give one per sample"):
        plot_timeline(tmp_path / "bad.png", runs(noisy, trend), dates=dates[:10])
