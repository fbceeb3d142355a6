"""Figures: raw and filtered volume over time, the operators each filter ran, Pareto fronts."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from matplotlib.artist import Artist
from matplotlib.figure import Figure

from filters import make_filter
from scaling import Scaler, ThresholdPolicy
from simulator import SimulationResult, add_noise, paper_workload, simulate
from simulator.experiments.cells import build_scalers
from simulator.output.figures import filtered_figure, plot_filtered, plot_timeline, timeline_figure
from simulator.output.pareto import FRONT_LABELS, pareto_figure, text_box

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


def legend_labels(figure: Figure) -> list[str]:
    return [text.get_text() for legend in figure.legends for text in legend.get_texts()]


def drawn(figure: Figure) -> list[Artist]:
    """Every line and filled area of every panel: what the eye sees, not the legend's keys."""
    return [artist for axes in figure.axes for artist in [*axes.lines, *axes.collections]]


def assert_readable(figure: Figure, default: str = "default") -> None:
    """Each series the legend names is drawn, and in every panel the default is on top."""
    labels = {artist.get_label() for artist in drawn(figure)}
    assert set(legend_labels(figure)) <= labels
    for axes in figure.axes:
        lines = [line for line in axes.lines if not line.get_label().startswith("_")]
        if any(line.get_label() == default for line in lines):
            top = max(lines, key=lambda line: line.get_zorder())
            assert top.get_label() == default, [(ln.get_label(), ln.get_zorder()) for ln in lines]


@pytest.mark.parametrize("snr", [1.0, 5.0, 10.0])
def test_the_default_is_drawn_over_raw_and_every_filter(snr: float) -> None:
    # Raw thresholding jumps every second: drawn last, or recognised by value, it hid the
    # default's line (its values differ from the samples in the last digit).
    trend = paper_workload(seed=3, duration=300)
    noisy = add_noise(trend, snr=snr, seed=4)
    scalers = build_scalers(
        {"raw": ({"name": "raw"}, []), "default": ("default", []),
         "tvd lam_per_sigma=10": ({"name": "tvd", "lam_per_sigma": 10.0}, [])},
        ThresholdPolicy(capacity=50.0), operators=7,
    )  # fmt: skip
    results = {label: simulate(scaler, noisy, trend=trend) for label, scaler in scalers.items()}
    figure = timeline_figure(results, trend=trend, capacity=50.0)
    assert_readable(figure)
    assert {"raw", "default", "tvd lam_per_sigma=10", "samples", "trend"} <= set(
        legend_labels(figure)
    )
    operators = figure.axes[1]
    raw = next(line for line in operators.lines if line.get_label() == "raw")
    assert raw.get_zorder() == min(line.get_zorder() for line in operators.lines)
    assert (raw.get_alpha() or 1.0) < 0.5


def test_raw_is_told_by_its_name_and_gets_no_line_over_the_samples() -> None:
    trend = paper_workload(seed=3, duration=200)
    noisy = add_noise(trend, snr=5.0, seed=4)
    # Exactly the samples, give or take the last digit: raw by name, whatever its values.
    outputs = {"raw": noisy * (1 + 1e-16), "default": make_filter("changepoint").filter(noisy)}
    figure = filtered_figure(np.arange(200.0), noisy, outputs, trend=trend)
    assert_readable(figure)
    assert [line.get_label() for line in figure.axes[0].lines] == ["samples", "default", "trend"]


def test_a_pareto_plot_labels_the_front_stars_the_default_and_crosses_the_oracle() -> None:
    summary = [
        {"snr": 1.0, "filter": "tvd", "config": f"tvd lam_per_sigma={k}", "s_total": s,
         "p_total_trend": p}
        for k, s, p in [(5, 40, 900), (10, 20, 1000), (20, 10, 1300), (30, 30, 1200)]
    ] + [
        {"snr": 1.0, "filter": "changepoint", "config": "default", "s_total": 12,
         "p_total_trend": 950},
        {"snr": 1.0, "filter": "raw", "config": "oracle", "s_total": 10, "p_total_trend": 0},
    ]  # fmt: skip
    figure = pareto_figure(summary, [1.0])
    axes = figure.axes[0]
    labels = [text.get_text() for text in axes.texts]
    # The front (5, 10, 20) is labelled; the dominated setting (30) is a dot only.
    assert sorted(labels) == ["default", "tvd lam_per_sigma=10", "tvd lam_per_sigma=20",
                              "tvd lam_per_sigma=5"]  # fmt: skip
    markers = set(legend_labels(figure))
    assert {"steadyscale's default", "oracle: thresholding the noise-free trend", "tvd"} <= markers
    assert "changepoint" not in markers  # the default's filter is not a family of the grid


def test_the_labels_of_a_pareto_plot_never_write_over_each_other() -> None:
    # A crowded front: the paper's sweep at SNR 1 put two labels of its front one over the other.
    front = [(30 + k, 1000 - 5 * k) for k in range(10)]
    summary = [
        {"snr": snr, "filter": "tvd", "config": f"tvd lam_per_sigma={k}", "s_total": s,
         "p_total_trend": p}
        for snr in (1.0, 5.0) for k, (s, p) in enumerate(front)
    ] + [
        {"snr": snr, "filter": "changepoint", "config": "default", "s_total": 30.5,
         "p_total_trend": 1001}
        for snr in (1.0, 5.0)
    ]  # fmt: skip
    figure = pareto_figure(summary, [1.0, 5.0])
    figure.draw_without_rendering()
    for axes in figure.axes:
        boxes = {text.get_text(): text_box(text) for text in axes.texts}
        assert len(boxes) == FRONT_LABELS + 1  # the default's and the front's
        for (first, one), (second, other) in itertools.combinations(boxes.items(), 2):
            shared_width = min(one.x1, other.x1) - max(one.x0, other.x0)
            shared_height = min(one.y1, other.y1) - max(one.y0, other.y0)
            assert shared_width <= 0 or shared_height <= 0, (first, second)
