"""Workloads: determinism, the documented shapes, trace replay and validation."""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from simulator.model.catalog import WORKLOADS, make_workload
from simulator.model.traces import recording_spacing, replay_trace, trace_workload
from simulator.model.workloads import (
    convergence_workload,
    cosine_workload,
    monotone_workload,
    paper_workload,
    random_walk_workload,
    spike_workload,
    step_workload,
)

TRACES = Path(__file__).parents[3] / "shared" / "data" / "traces"
TRACE_NAMES = [
    "Twitter_volume_AAPL",
    "Twitter_volume_AMZN",
    "Twitter_volume_FB",
    "ec2_network_in_257a54",
    "nyc_taxi",
]
GENERATED = sorted(set(WORKLOADS) - {"trace"})
RANDOM = ["paper", "random_walk", "increasing", "decreasing"]


def write_trace(path: Path, rows: list[tuple[str, str]], header: str = "timestamp,value") -> Path:
    lines = [header, *(f"{stamp},{value}" for stamp, value in rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def pieces(trend: np.ndarray) -> list[tuple[str, int, float]]:
    """Split a paper trend into ("plateau" | "step" | "ramp", seconds, level change)."""
    differences = np.diff(trend)
    runs: list[list[float]] = []
    for difference in differences.tolist():
        if runs and np.isclose(difference, runs[-1][0], rtol=0, atol=1e-9):
            runs[-1].append(difference)
        else:
            runs.append([difference])
    found: list[tuple[str, int, float]] = []
    for index, run in enumerate(runs):
        if run[0] == 0:
            # A plateau of N s gives N - 1 equal differences; N when a ramp follows, because a
            # ramp starts at the plateau's level.
            ramp_follows = index + 1 < len(runs) and abs(runs[index + 1][0]) < 50
            found.append(("plateau", len(run) + 1 - ramp_follows, 0.0))
        elif abs(run[0]) >= 50:
            assert len(run) == 1, "two steps in a row"
            found.append(("step", 0, run[0]))
        else:
            found.append(("ramp", len(run), float(sum(run))))
    return found


@pytest.mark.parametrize("name", RANDOM)
def test_random_workloads_are_determined_by_their_seed(name: str) -> None:
    first = make_workload(name, seed=7)
    assert np.array_equal(first, make_workload(name, seed=7))
    assert not np.array_equal(first, make_workload(name, seed=8))


@pytest.mark.parametrize("name", GENERATED)
def test_every_generated_workload_is_a_non_negative_float_series_of_the_asked_length(
    name: str,
) -> None:
    trend = make_workload(name, seed=3, duration=1500)
    assert trend.shape == (1500,) and trend.dtype == np.float64
    assert np.all(np.isfinite(trend)) and trend.min() >= 0
    assert make_workload(name, seed=3, duration=90, step=0.5).shape == (180,)


@pytest.mark.parametrize("seed", range(40))
def test_paper_workload_has_the_documented_shape(seed: int) -> None:
    trend = paper_workload(seed)
    assert trend.shape == (1500,)
    assert 200.0 <= trend.min() and trend.max() <= 500.0
    found = pieces(trend)
    kinds = [kind for kind, _, _ in found]
    assert all(kind == "plateau" for kind in kinds[::2])
    transitions = kinds[1::2]
    assert transitions == [["step", "ramp"][index % 2] for index in range(len(transitions))]
    for kind, seconds, change in found[:-1]:  # the last piece may be cut short
        if kind == "plateau":
            assert 100 <= seconds <= 250
        else:
            assert abs(change) >= 50 - 1e-9
        if kind == "ramp":
            assert 60 <= seconds <= 180


def test_paper_workload_has_seven_plateaus_on_average() -> None:
    counts = [
        sum(kind == "plateau" for kind, _, _ in pieces(paper_workload(seed))) for seed in range(200)
    ]
    assert 6.5 <= np.mean(counts) <= 7.5
    assert min(counts) >= 5


def test_paper_workload_scales_with_duration_and_step() -> None:
    trend = paper_workload(seed=2)
    assert np.array_equal(paper_workload(seed=2, duration=3000)[:1500], trend)
    assert np.array_equal(paper_workload(seed=2, step=2.0), trend[::2])


def test_step_and_convergence_workloads_hold_each_level_for_its_duration() -> None:
    assert step_workload([1.0, 2.0, 3.0], 2).tolist() == [1, 1, 2, 2, 3, 3]
    # A level that starts between two samples shows from the next sample.
    assert step_workload([1.0, 2.0], [1.5, 1.5]).tolist() == [1, 1, 2]
    trend = convergence_workload()
    assert [int((trend == level).sum()) for level in (0, 400, 200)] == [167, 667, 666]
    assert make_workload("step").tolist() == [250.0] * 500 + [450.0] * 500 + [300.0] * 500


def test_cosine_starts_at_its_maximum_and_spans_mean_plus_minus_amplitude() -> None:
    trend = cosine_workload(mean=350.0, amplitude=150.0, period=600.0, duration=1200)
    assert trend[0] == 500.0 and trend[300] == pytest.approx(200.0)
    assert trend.min() == pytest.approx(200.0) and trend.max() == 500.0


def test_monotone_workloads_run_from_start_to_end_without_turning_back() -> None:
    increasing = make_workload("increasing", seed=5)
    decreasing = make_workload("decreasing", seed=5)
    assert increasing[0] == 200.0 and increasing[-1] == 500.0
    assert decreasing[0] == 500.0 and decreasing[-1] == 200.0
    assert np.all(np.diff(increasing) >= 0) and np.all(np.diff(decreasing) <= 0)
    # Uneven slopes, not a straight line.
    assert np.ptp(np.diff(increasing)) > 0.1
    assert np.allclose(monotone_workload(seed=5, pieces=1), make_workload("ramp"), rtol=1e-14)


def test_random_walk_steps_have_the_stated_spread_per_second() -> None:
    wide = {"low": 0.0, "high": 1e9, "start": 5e8, "duration": 40_000}
    per_second = np.diff(random_walk_workload(seed=1, step_std=4.5, **wide))
    assert per_second.std() == pytest.approx(4.5, rel=0.02)
    per_four_seconds = np.diff(random_walk_workload(seed=1, step_std=4.5, step=4.0, **wide))
    assert per_four_seconds.std() == pytest.approx(9.0, rel=0.03)


def test_random_walk_is_reflected_at_its_bounds_not_clipped() -> None:
    walk = random_walk_workload(seed=4, step_std=5.0, low=200.0, high=210.0)
    assert 200.0 <= walk.min() and walk.max() <= 210.0
    # Clipping would hold the walk at a bound for several samples in a row.
    assert not np.any((walk[1:] == walk[:-1]) & ((walk[1:] == 200.0) | (walk[1:] == 210.0)))
    # Reflection only folds the free walk: the size of every move stays the same or shrinks.
    free = np.diff(random_walk_workload(seed=4, step_std=5.0, low=0.0, high=1e9, start=205.0))
    assert np.all(np.abs(np.diff(walk)) <= np.abs(free) + 1e-9)


def test_spike_workload_bursts_every_period_after_a_flat_start() -> None:
    trend = spike_workload(base=300.0, spike_height=-100.0, spike_every=300, spike_length=10)
    valleys = np.flatnonzero(trend == 200.0)
    assert valleys.tolist() == [k * 300 + i for k in range(1, 5) for i in range(10)]
    assert set(trend.tolist()) == {200.0, 300.0}


def test_trace_is_replayed_one_recorded_sample_per_second_and_rescaled(tmp_path: Path) -> None:
    rows = [
        ("2015-02-26 21:40:00", "10"),
        ("2015-02-26 21:45:00", "20"),
        ("2015-02-26 21:50:00", "40"),
        ("2015-02-26 21:55:00", "30"),
    ]
    path = write_trace(tmp_path / "trace.csv", rows)
    assert trace_workload(path).tolist() == [200.0, 300.0, 500.0, 400.0]
    assert trace_workload(path, low=None, high=None).tolist() == [10.0, 20.0, 40.0, 30.0]
    halves = [200.0, 250.0, 300.0, 400.0, 500.0, 450.0, 400.0]
    assert trace_workload(path, time_scale=150).tolist() == halves
    assert trace_workload(path, step=0.5, time_scale=300).tolist() == halves
    # By default one recorded sample per output sample, whatever the step.
    assert trace_workload(path, step=0.5).tolist() == [200.0, 300.0, 500.0, 400.0]
    # Cut first, then rescaled: the returned part spans [low, high].
    assert trace_workload(path, duration=2, low=0.0, high=1.0).tolist() == [0.0, 1.0]


def test_trace_gaps_are_bridged_by_straight_lines(tmp_path: Path) -> None:
    rows = [("0", "100"), ("300", "200"), ("600", "300"), ("1200", "500"), ("1500", "600")]
    path = write_trace(tmp_path / "gap.csv", rows)
    replayed = trace_workload(path, low=None, high=None)
    assert replayed.tolist() == [100.0, 200.0, 300.0, 400.0, 500.0, 600.0]


def test_trace_timestamps_with_offsets_are_compared_in_utc(tmp_path: Path) -> None:
    rows = [
        ("2020-01-01T00:00:00+00:00", "1"),
        ("2020-01-01T01:05:00+01:00", "2"),
        ("2020-01-01T00:10:00Z", "3"),
    ]
    path = write_trace(tmp_path / "zones.csv", rows)
    assert trace_workload(path, low=None, high=None).tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    ("header", "rows", "kwargs", "message"),
    [
        ("time,value", [("0", "1"), ("1", "2")], {}, "'timestamp' and 'value'"),
        ("timestamp,value", [("0", "1"), ("1", "2")], {"column": "volume"}, "'volume'"),
        ("timestamp,value", [("0", "1"), ("1", "many")], {}, "line 3: value='many'"),
        ("timestamp,value", [("0", "1"), ("1", "nan")], {}, "line 3: value='nan'"),
        ("timestamp,value", [("0", "1"), ("1", "")], {}, "line 3: value=''"),
        ("timestamp,value", [("0", "1"), ("2", "2"), ("1", "3")], {}, "line 4: timestamp='1'"),
        ("timestamp,value", [("0", "1"), ("0", "2")], {}, "line 3: timestamp='0'"),
        ("timestamp,value", [("0", "1"), ("soon", "2")], {}, "line 3: timestamp='soon'"),
        ("timestamp,value", [("2015-02-26", "1"), ("9", "2")], {}, "line 3: timestamp='9'"),
        ("timestamp,value", [("0", "1"), ("inf", "2")], {}, "line 3: timestamp='inf'"),
        ("timestamp,value", [("0", "1")], {}, "at least 2"),
        ("timestamp,value", [("0", "5"), ("1", "5")], {}, "constant"),
        ("timestamp,value", [("0", "1"), ("1", "2")], {"duration": 3}, "duration=3"),
        ("timestamp,value", [("0", "1"), ("1", "2")], {"high": None}, "high=None"),
        ("timestamp,value", [("0", "1"), ("1", "2")], {"low": 600.0}, "high=500.0"),
        ("timestamp,value", [("0", "1"), ("1", "2")], {"time_scale": 0}, "time_scale=0"),
    ],
)
def test_bad_traces_and_parameters_are_refused_with_the_reason(
    tmp_path: Path,
    header: str,
    rows: list[tuple[str, str]],
    kwargs: dict[str, object],
    message: str,
) -> None:
    path = write_trace(tmp_path / "bad.csv", rows, header)
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        trace_workload(path, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", TRACE_NAMES)
def test_the_nab_traces_replay_at_one_recorded_sample_per_second(name: str) -> None:
    path = TRACES / f"{name}.csv"
    if not path.exists():
        pytest.skip(f"{path} is not here (the shared data sits next to the repository)")
    with path.open(newline="") as file:
        rows = list(csv.DictReader(file))
    moments = np.array([datetime.fromisoformat(row["timestamp"]) for row in rows])
    recorded = np.array([float(row["value"]) for row in rows])
    spacing = np.median(np.diff(moments))  # 5 or 30 minutes
    positions = ((moments - moments[0]) / spacing).astype(int)
    replayed = trace_workload(path, low=None, high=None)
    # Every recorded sample at its own second; gaps (ec2_network_in has two) are interpolated.
    assert replayed.size == positions[-1] + 1 >= len(rows)
    assert np.array_equal(replayed[positions], recorded)
    trend = make_workload("trace", path=path)
    assert trend.shape == (1500,)
    assert trend.min() == 200.0 and trend.max() == 500.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: paper_workload(seed=-1), "paper_workload: seed=-1 is not allowed"),
        (lambda: paper_workload(seed=1, duration=10.5), "duration=10.5 .*multiple of step"),
        (lambda: paper_workload(seed=1, step=0), "step=0 is not allowed"),
        (lambda: step_workload([], 10), "levels=\\[\\]"),
        (lambda: step_workload([1.0, -2.0], 10), "levels\\[1\\]=-2.0"),
        (lambda: step_workload([1.0, 2.0], [10]), "duration_each=\\[10\\]"),
        (lambda: cosine_workload(mean=100.0, amplitude=150.0), "amplitude=150.0.*<= 100"),
        (lambda: random_walk_workload(seed=0, start=100.0), "start=100.0.*>= 200"),
        (lambda: random_walk_workload(seed=0, high=200.0), "high=200.0.*> 200"),
        (lambda: spike_workload(spike_length=400), "spike_length=400.*<= 300"),
        (lambda: spike_workload(spike_height=-400.0), "spike_height=-400.0"),
        (lambda: monotone_workload(seed=0, pieces=0), "pieces=0"),
        (lambda: convergence_workload(duration=-9), "convergence_workload: duration=-9"),
        (lambda: make_workload("step", duration=0), "step workload: duration=0"),
        (lambda: make_workload("sine"), "name='sine'.*'paper'"),
        (lambda: make_workload("paper", lam=3), "lam=3 .*'paper'.*\\['duration', 'step'\\]"),
        (lambda: make_workload("trace"), "'trace' needs the parameter\\(s\\) \\['path'\\]"),
    ],
)
def test_invalid_parameters_raise_value_errors_that_name_them(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


def test_a_replay_says_what_was_done_to_the_trace_and_keeps_its_dates(tmp_path: Path) -> None:
    rows = [("2015-02-26 21:40:00", "10"), ("2015-02-26 21:45:00", "20"),
            ("2015-02-26 21:50:00", "40")]  # fmt: skip
    path = write_trace(tmp_path / "trace.csv", rows)
    compressed = replay_trace(path)
    assert compressed.time_scale == 300.0 and compressed.rescaled == (200.0, 500.0)
    assert "time compressed 300x" in compressed.describe()
    assert "values 10 to 40 rescaled linearly to 200 to 500 tuples/s" in compressed.describe()
    dates = compressed.dates()
    assert dates is not None and str(dates[-1]) == "2015-02-26T21:50:00.000"

    real = replay_trace(path, step=recording_spacing(path), time_scale=1.0, low=None, high=None)
    assert real.values.tolist() == [10.0, 20.0, 40.0] and real.step == 300.0
    assert "replayed in real time" in real.describe("events/s")
    assert "values as recorded, 10 to 40 events/s" in real.describe("events/s")
    assert real.dates() is not None and (real.dates() == dates).all()

    seconds = write_trace(tmp_path / "seconds.csv", [("0", "1"), ("60", "2")])
    assert replay_trace(seconds).dates() is None
