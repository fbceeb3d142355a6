"""benchmarks.replay_spark: a run's recorded samples through today's Scaler."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import replay_spark
from scaling import Scaler
from scaling.spark.attach import EXECUTOR_RESTART


def _recorded(folder: Path) -> None:
    """A run's decisions file as benchmarks.spark_e2e writes it, from a Scaler built as
    ``autoscale`` builds one, on a queue whose executors land one sample after the decision."""
    policy = {"capacity": 100.0, "min_operators": 1, "max_operators": 6}
    scaler = Scaler.from_spec({"policy": {**policy, "restart": EXECUTOR_RESTART}}, operators=3)
    running, backlog, lines = 3, 0.0, []
    for second in range(120):
        volume = 150.0 if second < 40 else 480.0
        processed = min(backlog + volume, running * 100.0)
        backlog = backlog + volume - processed
        decision = scaler.observe(
            volume, float(second), backlog=backlog, running=running, processed=processed
        )
        lines.append(
            json.dumps(
                {
                    "t": float(second),
                    "volume": volume,
                    "backlog": backlog,
                    "running": running,
                    "processed": processed,
                    "operators": decision.operators,
                    "code": decision.code,
                    "reason": decision.reason,
                }
            )  # fmt: skip
        )
        running = decision.operators
    (folder / "decisions-steadyscale.jsonl").write_text("\n".join(lines) + "\n")


def test_the_code_that_made_a_run_replays_it_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _recorded(tmp_path)
    replay_spark.main([str(tmp_path), "--changed"])
    out = capsys.readouterr().out
    assert out.strip().endswith(f"0 of 120 decisions differ from the recorded ones "
                                f"({tmp_path / 'decisions-steadyscale.jsonl'})")  # fmt: skip
    replay_spark.main([str(tmp_path), "--from", "40", "--to", "41"])
    shown = capsys.readouterr().out.splitlines()
    assert [line.split(" volume")[0] for line in shown[:-1]] == ["t=   40.0", "t=   41.0"]


def test_a_different_spec_shows_the_decisions_that_differ(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _recorded(tmp_path)
    replay_spark.main([str(tmp_path), "--changed", "--executors", "3"])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) > 1 and all("replayed" in line for line in lines[:-1])
    assert int(lines[-1].split(" of ")[0]) == len(lines) - 1
