"""``steadyscale denoise``: what it writes and prints, and how it refuses bad input."""

from __future__ import annotations

import csv
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from simulator.cli import main

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def read_columns(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="") as file:
        header, *rows = csv.reader(file)
    return header, rows


def write_trace(path: Path, timestamps: list[str], values: list[float]) -> Path:
    with path.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["timestamp", "value"])
        writer.writerows(zip(timestamps, values, strict=True))
    return path


def iso_minutes(count: int) -> list[str]:
    start = datetime(2015, 2, 26, 21, 42, 53)
    return [str(start + timedelta(minutes=5 * k)) for k in range(count)]


def test_demo_writes_every_default_filter_and_a_summary_that_matches_the_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["denoise", "--out", str(tmp_path)]) == 0

    header, rows = read_columns(tmp_path / "filtered.csv")
    assert header[:2] == ["timestamp", "value"]
    assert header[2:5] == ["raw", "moving_average:w=60", "ewma:alpha=0.05"]
    assert header[5].startswith("tvd:lam=") and header[6:] == ["ekf"]
    # The demo's noise deviation is 50; the default weight is 10 times its estimate.
    assert float(header[5].removeprefix("tvd:lam=")) == pytest.approx(500, rel=0.1)
    assert len(rows) == 1500
    table = np.array([[float(cell) for cell in row] for row in rows])
    assert np.array_equal(table[:, 0], np.arange(1500))
    assert np.array_equal(table[:, 2], table[:, 1])  # raw is the samples
    assert (tmp_path / "denoise.png").read_bytes().startswith(PNG_SIGNATURE)

    # Every summary row is its column's roughness and its distance to the (known) trend: each
    # filter is much smoother than the raw samples, and TVD is much closer to the trend.
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2:] == [f"wrote {tmp_path / 'filtered.csv'}", f"wrote {tmp_path / 'denoise.png'}"]
    printed = {line.split()[0]: line.split()[1:] for line in lines}
    assert printed["filter"] == ["roughness", "RMSE", "vs", "trend"]
    for index, name in enumerate(header[2:], start=2):
        roughness = np.mean(np.abs(np.diff(table[:, index])))
        assert float(printed[name][0]) == pytest.approx(roughness, abs=1e-3)
        if name != "raw":
            assert roughness < float(printed["raw"][0]) / 10
    assert float(printed[header[5]][1]) < float(printed["raw"][1]) * 0.7


def test_demo_is_reproducible_per_seed(tmp_path: Path) -> None:
    for name, seed in (("a", "7"), ("b", "7"), ("c", "8")):
        args = ["denoise", "--seed", seed, "--filter", "raw", "--out", str(tmp_path / name)]
        assert main(args) == 0
    first, again, other = (tmp_path / name / "filtered.csv" for name in "abc")
    assert first.read_bytes() == again.read_bytes()
    assert first.read_bytes() != other.read_bytes()


def test_csv_with_iso_timestamps_keeps_them_and_names_columns_by_spec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stamps = iso_minutes(120)
    values = [100.0] * 60 + [300.0] * 60
    trace = write_trace(tmp_path / "trace.csv", stamps, values)
    specs = ["moving_average:w=5", "tvd:lam=50", '{"name": "ewma", "alpha": 0.5}']
    args = ["denoise", "--input", str(trace), "--out", str(tmp_path / "out")]
    assert main([*args, *(part for spec in specs for part in ("--filter", spec))]) == 0

    header, rows = read_columns(tmp_path / "out" / "filtered.csv")
    assert header == ["timestamp", "value", *specs]
    assert [row[0] for row in rows] == stamps
    assert [float(row[1]) for row in rows] == values
    # Five samples after the step the 5-sample moving average has fully moved to it.
    assert [float(row[2]) for row in rows[64:66]] == [300.0, 300.0]
    assert (tmp_path / "out" / "denoise.png").read_bytes().startswith(PNG_SIGNATURE)
    out = capsys.readouterr().out
    assert "RMSE" not in out  # no trend is known for a trace


def test_default_tvd_weight_follows_the_units_of_the_input(tmp_path: Path) -> None:
    # The same shape in thousands: lam is 10 times the noise estimate, so it scales along.
    rng = np.random.default_rng(3)
    values = (np.repeat([300.0, 450.0], 200) + rng.normal(0.0, 40.0, 400)) * 1000.0
    trace = write_trace(tmp_path / "trace.csv", [str(t) for t in range(400)], values.tolist())
    assert main(["denoise", "--input", str(trace), "--out", str(tmp_path)]) == 0
    header, _ = read_columns(tmp_path / "filtered.csv")
    tvd = next(name for name in header if name.startswith("tvd:lam="))
    assert float(tvd.removeprefix("tvd:lam=")) == pytest.approx(10 * 40_000, rel=0.2)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("moving_average:w=0", "w=0 is not allowed: w must be an integer >= 1"),
        ("ewma:alpha=fast", "alpha='fast' is not allowed"),
        ("tvd:lamda=5", "unknown parameter 'lamda'"),
        ("median", "name='median' is not a filter"),
        ("tvd:lam", "'lam' is not of the form key=value"),
        ('{"name": tvd}', "is not valid JSON"),
    ],
)
def test_bad_filter_spec_fails_with_the_reason_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, message: str
) -> None:
    assert main(["denoise", "--filter", "raw", "--filter", spec, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert not (tmp_path / "filtered.csv").exists()


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["time,volume", "1,2"], "the header must name timestamp and value"),
        (["timestamp,value", "1,200", "2,lots"], "line 3: value='lots' is not a finite number"),
        (["timestamp,value", "1,200", "2,nan"], "line 3: value='nan' is not a finite number"),
        (["timestamp,value", "2015-02-26 21:42:53,1", "yesterday,2"], "line 3: timestamp="),
        (["timestamp,value", "1,200", "3,210", "2,205"], "line 4: timestamp goes back in time"),
        (["timestamp,value", "1,200"], "at least 2 are needed"),
    ],
)
def test_bad_csv_fails_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str], message: str
) -> None:
    trace = tmp_path / "trace.csv"
    trace.write_text("\n".join(lines) + "\n")
    assert main(["denoise", "--input", str(trace), "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err


def test_missing_input_file_fails_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["denoise", "--input", str(tmp_path / "absent.csv")]) == 2
    err = capsys.readouterr().err
    assert "absent.csv" in err
    assert "Traceback" not in err
