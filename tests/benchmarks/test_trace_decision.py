"""benchmarks.trace_decision: the cost curve printed beside a decision's record."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.trace_decision import curve, main
from scaling import Scaler


def test_the_curve_prices_every_count_again_and_marks_the_chosen_one() -> None:
    scaler = Scaler.from_spec(
        {"filter": {"name": "raw"}, "policy": {"capacity": 50.0}}, operators=4
    )
    decision = None
    for t in range(1, 40):
        decision = scaler.observe(300.0 + (t % 3), float(t), backlog=50.0 * t, running=4)
    assert decision is not None and decision.explain is not None
    lines = curve(decision, 50.0)
    rows = [line.split() for line in lines[1:]]
    assert [int(row[0]) for row in rows] == list(range(len(rows)))
    assert len(rows) - 1 == 2 * max(decision.operators, decision.explain["unbounded"])
    chosen = [row for row in rows if row[-1] == "chosen"]
    assert len(chosen) == 1 and int(chosen[0][0]) == decision.operators
    recorded = next(
        c for c in decision.explain["candidates"] if c["operators"] == decision.operators
    )
    # Priced again from inputs the record rounds to 4 decimals: the same total within a unit.
    assert abs(float(chosen[0][3]) - recorded["total"]) <= 1.0


def test_a_volume_only_decision_has_no_curve() -> None:
    scaler = Scaler.from_spec({"filter": {"name": "raw"}, "policy": {"capacity": 50.0}})
    decision = scaler.observe(300.0, 1.0)
    assert curve(decision, 50.0) == ["    (no cost curve: not a priced cost-model decision)"]


def test_the_curve_prices_from_every_input_the_record_holds() -> None:
    """A count that has stood long is priced over its tenure, and a lean one with the chance a
    later operation corrects it: the curve's neighbours cost what the record says they do."""
    scaler = Scaler.from_spec({"filter": {"name": "raw"}, "policy": {"capacity": 50.0}})
    running, decision = 1, None
    for t in range(1, 1200):
        volume = 330.0 + 40.0 * ((t * 7919) % 13 - 6) / 6.0  # wanders about 330 records/s
        decision = scaler.observe(volume, float(t), backlog=0.0, running=running)
        running = decision.operators
    assert decision is not None and decision.explain is not None
    inputs = decision.explain["inputs"]
    assert inputs["tenure"] > 300.0 and inputs["wander"] > 0.0
    rows = {
        int(row[0]): float(row[3]) for row in (line.split() for line in curve(decision, 50.0)[1:])
    }
    candidates = decision.explain["candidates"]
    assert any(c["correction"] > 0.0 for c in candidates)
    for recorded in candidates:
        assert abs(rows[recorded["operators"]] - recorded["total"]) <= 1.0, recorded


def test_a_recorded_trace_is_traced_as_compare_runs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--workload trace:NAME`` reads ``NAME.csv`` from ``--traces``, all of it."""
    rows = "\n".join(f"{t},{200 + 150 * (t // 600 % 2)}" for t in range(0, 1800, 60))
    (tmp_path / "tiny.csv").write_text("timestamp,value\n" + rows + "\n", encoding="utf-8")
    main(["--workload", "trace:tiny", "--traces", str(tmp_path), "--snr", "10", "--pause", "8"])
    head, *changes = capsys.readouterr().out.splitlines()
    assert head.startswith("trace:tiny, SNR 10, seed 1, pause 8 s, delay 0 s: ")
    assert changes and all(line.startswith("t=") for line in changes)


def test_a_change_decided_at_the_run_s_last_sample_is_listed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The paper workload at SNR 10, seed 2, (8, 0): its last decision, at t = 1500 after the
    # last second's step, changes the count; it indexed the trend past its end (IndexError).
    main(["--workload", "paper", "--snr", "10", "--seed", "2", "--pause", "8"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].startswith("t=  1500")
    assert lines[-1].endswith("late s in the next 40: 0")
