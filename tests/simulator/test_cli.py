"""``steadyscale denoise``: what it writes and prints, and how it refuses bad input."""

from __future__ import annotations

import csv
import importlib.util
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from simulator.cli import main, parser
from simulator.model.traces import read_trace

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
    # The default first, as simulate runs it: denoise shows what the product does.
    assert header[2:6] == ["default", "raw", "moving_average:w=60", "ewma:alpha=0.05"]
    assert header[6:] == ["tvd", "ekf"]
    assert len(rows) == 1500
    table = np.array([[float(cell) for cell in row] for row in rows])
    assert np.array_equal(table[:, 0], np.arange(1500))
    assert np.array_equal(table[:, 3], table[:, 1])  # raw is the samples
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
    assert float(printed["tvd"][1]) < float(printed["raw"][1]) * 0.7


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


def test_default_filters_do_not_depend_on_the_units_of_the_input(tmp_path: Path) -> None:
    # The same series in tuples/s and in thousandths: tvd and ekf estimate the noise, so their
    # output scales along instead of smoothing one version far more than the other.
    rng = np.random.default_rng(3)
    values = np.repeat([300.0, 450.0], 200) + rng.normal(0.0, 40.0, 400)
    outputs = []
    for scale in (1.0, 1000.0):
        trace = write_trace(
            tmp_path / f"trace{scale:g}.csv",
            [str(t) for t in range(400)],
            (values * scale).tolist(),
        )
        out = tmp_path / f"out{scale:g}"
        assert main(["denoise", "--input", str(trace), "--filter", "tvd", "--out", str(out)]) == 0
        header, rows = read_columns(out / "filtered.csv")
        outputs.append(np.array([float(row[header.index("tvd")]) for row in rows]))
    np.testing.assert_allclose(outputs[1], 1000.0 * outputs[0], rtol=1e-9)


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
        (["time,volume", "1,2"], "the header must name the columns 'timestamp' and 'value'"),
        (["timestamp,value", "1,200", "2,lots"], "line 3: value='lots' is not a finite number"),
        (["timestamp,value", "1,200", "2,nan"], "line 3: value='nan' is not a finite number"),
        (["timestamp,value", "2015-02-26 21:42:53,1", "yesterday,2"], "line 3: timestamp="),
        (["timestamp,value", "1,200", "3,210", "2,205"], "line 4: timestamp='2' does not come"),
        (["timestamp,value", "1,200", "1,205"], "line 3: timestamp='1' does not come"),
        (["timestamp,value", "1,200"], "a trace needs at least 2"),
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


# --- simulate ------------------------------------------------------------------------------

METRICS = ["s_up", "s_down", "p_over", "p_under", "p_over_trend", "p_under_trend"]


def read_summary(folder: Path) -> dict[str, dict[str, float]]:
    header, rows = read_columns(folder / "summary.csv")
    assert header == ["filter", *METRICS, "operator_seconds"]
    return {row[0]: dict(zip(header[1:], map(float, row[1:]), strict=True)) for row in rows}


def test_simulate_writes_timeline_summary_and_plot_and_states_its_definitions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["simulate", "--duration", "300", "--snr", "1", "--out", str(tmp_path)]
    assert main(args) == 0

    summary = read_summary(tmp_path)
    names = [name.partition(":")[0] for name in summary]
    assert names == ["default", "raw", "moving_average", "tvd", "ekf"]
    tvd = "tvd"
    assert summary["raw"]["p_over"] == summary["raw"]["p_under"] == 0  # raw follows the samples
    raw_operations = summary["raw"]["s_up"] + summary["raw"]["s_down"]
    assert raw_operations > 5 * (summary[tvd]["s_up"] + summary[tvd]["s_down"])

    header, rows = read_columns(tmp_path / "timeline.csv")
    assert header[:3] == ["t", "volume", "trend"]
    assert header[-2:] == ["needed", "needed_trend"]
    assert f"operators[{tvd}]" in header and f"filtered[{tvd}]" in header
    assert len(rows) == 300
    assert (tmp_path / "simulate.png").read_bytes().startswith(PNG_SIGNATURE)

    out = capsys.readouterr().out
    assert "SNR 1 by the power definition (mean(trend²) / σ²), σ = " in out
    assert "capacity 50 tuples/s per operator" in out
    assert "than the samples need (p± trend: than the trend needs)" in out


def test_simulate_is_reproducible_per_seed(tmp_path: Path) -> None:
    for name, seed in (("a", "4"), ("b", "4"), ("c", "5")):
        args = ["simulate", "--duration", "200", "--snr", "5", "--seed", seed]
        assert main([*args, "--out", str(tmp_path / name)]) == 0
    first, again, other = (tmp_path / name for name in "abc")
    for name in ("summary.csv", "timeline.csv"):
        assert (first / name).read_bytes() == (again / name).read_bytes()
        assert (first / name).read_bytes() != (other / name).read_bytes()


def test_simulate_starts_at_the_operators_the_trend_needs_and_applies_guards(
    tmp_path: Path,
) -> None:
    # 300 tuples/s then 100: six operators, then two. No noise, so raw scales exactly once.
    args = ["simulate", "--workload", "step", "--param", "levels=[300, 100]", "--duration", "100"]
    assert main([*args, "--filter", "raw", "--out", str(tmp_path / "plain")]) == 0
    row = read_summary(tmp_path / "plain")["raw"]
    assert (row["s_up"], row["s_down"]) == (0, 1)
    assert all(row[metric] == 0 for metric in METRICS[2:])
    guarded = [*args, "--filter", "raw", "--guards", "max_step:down=1", "--operators", "1"]
    assert main([*guarded, "--out", str(tmp_path / "guarded")]) == 0
    # From 1 up to 6 at once, then down 6 -> 2 one operator per decision: 3 s over.
    row = read_summary(tmp_path / "guarded")["raw"]
    assert (row["s_up"], row["s_down"], row["p_over"]) == (1, 4, 3.0)


def test_simulate_replays_a_trace_as_the_trend(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    values = np.repeat([10.0, 30.0, 20.0], 40) + rng.normal(0.0, 1.0, 120)
    trace = write_trace(tmp_path / "trace.csv", [str(60 * k) for k in range(120)], values.tolist())
    args = ["simulate", "--trace", str(trace), "--filter", "raw", "--filter", "tvd:lam=200"]
    assert main([*args, "--out", str(tmp_path / "out")]) == 0

    header, rows = read_columns(tmp_path / "out" / "timeline.csv")
    table = np.array([[float(cell) for cell in row] for row in rows])
    assert len(rows) == 120  # the whole trace, one recorded sample per second
    np.testing.assert_array_equal(table[:, 1], table[:, 2])  # no --snr: the samples are the trend
    assert table[:, 2].min() == 200.0 and table[:, 2].max() == 500.0  # rescaled like the paper's
    summary = read_summary(tmp_path / "out")
    assert summary["raw"]["p_over_trend"] == summary["raw"]["p_under_trend"] == 0
    assert summary["tvd:lam=200"]["s_up"] < summary["raw"]["s_up"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--filter", "tvd:lamda=5"], "unknown parameter 'lamda'"),
        (["--guards", "cooldown:wait=5"], "unknown parameter 'wait'"),
        (["--workload", "sine"], "name='sine' is not allowed"),
        (["--param", "levels=[1]"], "levels=[1] is not allowed for workload 'paper'"),
        (["--param", "duration=60"], "--param duration=... is not allowed: use --duration"),
        (["--param", "levels"], "--param 'levels' is not of the form KEY=VALUE"),
        (["--snr", "0"], "snr=0.0 is not allowed"),
        (["--capacity", "0"], "capacity=0.0 is not allowed"),
        (["--trace", "absent.csv"], "absent.csv"),
    ],
)
def test_simulate_refuses_bad_input_with_the_reason_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    args = ["simulate", "--duration", "100", *options, "--out", str(tmp_path / "out")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("steadyscale simulate: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_simulate_takes_a_workload_or_a_trace_not_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = write_trace(tmp_path / "trace.csv", ["0", "1", "2"], [1.0, 2.0, 3.0])
    argv = ["simulate", "--workload", "paper", "--trace", str(trace), "--out", str(tmp_path)]
    assert main(argv) == 2
    assert "argument --trace: not allowed with argument --workload" in capsys.readouterr().err


@pytest.mark.spark  # starts a JVM through the command
def test_paper_runs_the_tables_without_the_sweep(tmp_path: Path) -> None:
    args = ["paper", "--seeds", "2", "--sweep-seeds", "0", "--definition", "power"]
    assert main([*args, "--out", str(tmp_path)]) == 0
    with (tmp_path / "paper.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert {(row["snr"], row["filter"]) for row in rows} == {
        (snr, name)
        for snr in ("0.5", "0.8", "1.0", "5.0", "10.0")
        # the paper's four, and steadyscale's default (changepoint); the oracle thresholds raw
        for name in ("raw", "moving_average", "tvd", "ekf", "changepoint")
    }
    assert (
        "steadyscale paper --seeds 2 --sweep-seeds 0 --definition power"
        in (tmp_path / "paper.md").read_text()
    )
    assert not (tmp_path / "paper_sweep.csv").exists()


def test_paper_refuses_a_single_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["paper", "--seeds", "1", "--out", str(tmp_path)]) == 2
    assert "--seeds=1" in capsys.readouterr().err


@pytest.mark.spark  # starts a JVM through the command
def test_trace_turns_event_records_into_a_replayable_volume_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 3 events in second 0, none in second 1, 2 in second 2 (unsorted), one every 0.5 s after.
    events = ["2014-07-01 00:00:00.1", "2014-07-01 00:00:02.5", "2014-07-01 00:00:00.7",
              "2014-07-01 00:00:00.9", "2014-07-01 00:00:02.0"]  # fmt: skip
    source = tmp_path / "events.csv"
    source.write_text("at,user\n" + "".join(f"{stamp},u{i}\n" for i, stamp in enumerate(events)))
    out = tmp_path / "trace.csv"
    args = ["trace", "--input", str(source), "--timestamp-column", "at", "--out", str(out)]
    assert main([*args, "--master", "local[2]"]) == 0
    seconds, values = read_trace(out)
    assert seconds.tolist() == [0.0, 1.0, 2.0] and values.tolist() == [3.0, 0.0, 2.0]
    assert "3 buckets" in capsys.readouterr().out
    assert main([*args[:-3], "when", "--out", str(out)]) == 2
    assert "when" in capsys.readouterr().err


def test_spark_commands_without_java_say_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    assert main(["sweep", "--seeds", "2", "--out", str(tmp_path / "sweep")]) == 2
    error = capsys.readouterr().err
    assert "steadyscale sweep: error:" in error and "Java 17" in error
    assert "openjdk-17" in error and "Traceback" not in error


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--input", "missing.parquet"], "missing.parquet: no such file"),
        (["--master", "local[x]"], "is not a Spark master URL"),
        (["--master", "spark://127.0.0.1:9"], "no Spark master answers at 127.0.0.1:9"),
    ],
)
def test_trace_refuses_a_missing_input_or_master_in_one_line_before_spark_starts(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    expected: str,
) -> None:
    source = tmp_path / "events.csv"
    source.write_text("ts\n2024-01-01 00:00:00\n")
    args = ["trace", "--input", str(source), "--timestamp-column", "ts"]
    code = main([*args, "--out", str(tmp_path / "t.csv"), *options])
    error = capsys.readouterr().err
    assert code == 2 and expected in error
    assert error.count("\n") == 1 and "Traceback" not in error
    assert not (tmp_path / "t.csv").exists()


@pytest.mark.spark  # starts a JVM through the command
def test_a_spark_command_prints_nothing_but_its_result_unless_verbose(tmp_path: Path) -> None:
    # A fresh process, so that a fresh JVM starts: what a user sees on a first run.
    source = tmp_path / "events.csv"
    source.write_text("ts\n2024-01-01 00:00:00\n2024-01-01 00:00:02\n")
    command = [sys.executable, "-m", "simulator.cli", "trace", "--input", str(source),
               "--timestamp-column", "ts", "--master", "local[1]"]  # fmt: skip
    env = {key: value for key, value in os.environ.items() if key != "STEADYSCALE_SPARK_VERBOSE"}
    quiet = subprocess.run([*command, "--out", str(tmp_path / "q.csv")],
                           capture_output=True, text=True, env=env, check=False)  # fmt: skip
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == "" and quiet.stdout.startswith("wrote ")
    verbose = subprocess.run([*command, "--out", str(tmp_path / "v.csv"), "--verbose"],
                             capture_output=True, text=True, env=env, check=False)  # fmt: skip
    assert verbose.returncode == 0 and "WARN" in verbose.stderr


def test_simulate_says_how_a_trace_was_replayed_and_can_keep_its_values_and_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stamps = [(datetime(2014, 7, 1) + timedelta(minutes=30 * k)).isoformat(" ") for k in range(60)]
    values = np.repeat([8000.0, 20000.0, 12000.0], 20)
    trace = write_trace(tmp_path / "taxi.csv", stamps, values.tolist())
    args = ["simulate", "--trace", str(trace), "--filter", "raw"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    said = capsys.readouterr().out
    assert "time compressed 1800x" in said and "rescaled linearly to 200 to 500 tuples/s" in said

    kept = [*args, "--keep-values", "--real-time", "--unit", "passengers/30 min",
            "--capacity", "4000", "--out", str(tmp_path / "b")]  # fmt: skip
    assert main(kept) == 0
    said = capsys.readouterr().out
    assert "replayed in real time" in said and "values as recorded" in said
    assert "capacity 4000 passengers/30 min per operator" in said
    _, rows = read_columns(tmp_path / "b" / "timeline.csv")
    assert [float(row[0]) for row in rows[:2]] == [0.0, 1800.0]  # t in recorded seconds
    assert sorted({float(row[1]) for row in rows}) == [8000.0, 12000.0, 20000.0]

    assert main(["simulate", "--keep-values", "--out", str(tmp_path / "c")]) == 2
    assert "apply to --trace only" in capsys.readouterr().err


def test_events_writes_an_event_log_whose_volume_follows_the_workload(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "logs" / "events.csv"
    args = ["events", "--workload", "step", "--duration", "30", "--out", str(out)]
    assert main(args) == 0
    header, rows = read_columns(out)
    assert (
        header == ["ts", "user"] and f"wrote {out} ({len(rows):,} events" in capsys.readouterr().out
    )
    stamps = [datetime.fromisoformat(row[0]) for row in rows]
    assert stamps == sorted(stamps) and stamps[0] >= datetime(2026, 1, 1)
    per_second = np.bincount([int((s - datetime(2026, 1, 1)).total_seconds()) for s in stamps])
    # step: 250, then 450, then 300 events/s for 10 s each; Poisson counts within 5 sigma.
    expected = np.repeat([250.0, 450.0, 300.0], 10)
    assert per_second.size == 30 and np.all(np.abs(per_second - expected) < 5 * np.sqrt(expected))
    assert main(["events", "--out", str(tmp_path / "events.json")]) == 2


@pytest.mark.parametrize(
    ("argv", "missing", "extra"),
    [
        (["simulate"], "tqdm", "plots"),
        (["denoise"], "matplotlib", "plots"),
        (["sweep", "--seeds", "2"], "pyspark", "spark"),
    ],
)
def test_a_command_whose_optional_dependency_is_missing_names_the_extra(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    missing: str,
    extra: str,
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *rest: None if name == missing else real(name)
    )
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert f"pip install 'steadyscale[{extra}]'" in error and error.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_version_and_one_style_of_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("steadyscale ")
    # A list option takes several values at once or one at a time: the same grid.
    together = parser().parse_args(["sweep", "--snr", "1", "5", "--filter", "raw", "tvd"])
    apart = parser().parse_args(["sweep", "--snr", "1", "--snr", "5", "--filter", "raw",
                                 "--filter", "tvd"])  # fmt: skip
    assert together.snr == apart.snr == [1.0, 5.0]
    assert together.filter == apart.filter == ["raw", "tvd"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sweep", "--filt", "raw"], "unrecognized arguments: --filt raw"),  # no abbreviations
        (["sweep", "--seeds", "2", "3"], "unrecognized arguments: 3"),
        (["simulate", "--snr", "1,5"], "argument --snr: invalid float value: '1,5'"),
        (["compare", "--policies", "hpa"], "unrecognized arguments: --policies hpa"),
    ],
)
def test_a_malformed_option_is_answered_with_its_commands_usage(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: steadyscale {argv[0]} ")  # not the top-level usage
    assert f"steadyscale {argv[0]}: error: {message}" in err


@pytest.mark.parametrize("command", ["denoise", "simulate", "paper", "sweep", "compare"])
def test_help_names_only_files_the_command_writes(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    named = {name.rstrip(".") for name in re.findall(r"DIR/([\w<>.]+)", text)}
    written = {
        "denoise": {"filtered.csv", "denoise.png"},
        "simulate": {"timeline.csv", "summary.csv", "simulate.png"},
        "paper": {"paper.md", "paper.csv", "paper_runs.csv", "timeline_<definition>_snr<X>.png",
                  "paper_sweep.csv", "paper_sweep_runs.csv", "pareto_<definition>.png"},
        "sweep": {"sweep.csv", "cells.parquet", "summary.csv", "pareto.csv", "sweep.md",
                  "pareto_<workload>_<definition>.png"},
        "compare": {"compare.csv", "cells.parquet", "summary.csv", "compare.md",
                    "compare_<workload>.png", "timeline_<workload>_snr<X>.png"},
    }  # fmt: skip
    assert named == written[command]


def test_sweep_takes_default_as_simulate_does(capsys: pytest.CaptureFixture[str]) -> None:
    # Its filters are checked before Spark: with a master that does not answer, the one error
    # left is the master's, so `default` (and the tvd grid) were accepted.
    argv = ["sweep", "--filter", "default", "tvd:lam_per_sigma=5|10", "--snr", "5", "--seeds", "2"]
    assert main([*argv, "--master", "nowhere"]) == 2
    error = capsys.readouterr().err
    assert "not a filter" not in error and "--master" in error
    assert main(["sweep", "--filter", "tdv", "--master", "local[1]"]) == 2
    assert "name='tdv' is not a filter" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["simulate", "--snrr", "5"], "did you mean --snr?"),
        (["simulate", "--filter", "tdv", "--duration", "60"], "did you mean 'tvd'?"),
        (["simulate", "--filter", "tvd:lamda=5", "--duration", "60"], "did you mean 'lam'?"),
        (["denoise", "--seeed", "2"], "did you mean --seed?"),
    ],
)
def test_a_typo_is_answered_with_the_closest_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], hint: str
) -> None:
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert hint in error
    assert "Traceback" not in error


def test_trace_refuses_a_volume_trace_in_one_line_before_spark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It used to count the rows of a timestamp,value file as events (0.00055 events/s), silently.
    volume = tmp_path / "volume.csv"
    volume.write_text("timestamp,value\n0,300\n1800,310\n")
    argv = ["trace", "--input", str(volume), "--timestamp-column", "timestamp"]
    assert main([*argv, "--out", str(tmp_path / "t.csv"), "--master", "nowhere"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "already a volume trace" in error and f"simulate --trace {volume}" in error
