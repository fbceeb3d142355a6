"""The command line in installs without PySpark: `make run` installs only [service,plots], and
`steadyscale serve`, `simulate`, `denoise` and `events` must start there; the Spark commands say
which extra they need."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

WITHOUT_PYSPARK = textwrap.dedent(
    """
    import sys
    for blocked in ("pyspark", "py4j"):
        sys.modules[blocked] = None  # import of it now fails as if it were not installed
    from simulator.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", WITHOUT_PYSPARK, *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_every_command_parses_and_local_ones_run_without_pyspark(tmp_path: Path) -> None:
    assert run("--help").returncode == 0
    for command in ("serve", "denoise", "simulate", "paper", "sweep", "compare", "trace", "events"):
        assert run(command, "--help").returncode == 0, command
    simulated = run("simulate", "--duration", "60", "--filter", "raw", "--out", str(tmp_path / "s"))
    assert simulated.returncode == 0, simulated.stderr
    events = run("events", "--duration", "5", "--out", str(tmp_path / "e.csv"))
    assert events.returncode == 0, events.stderr


def test_a_spark_command_without_pyspark_names_the_extra(tmp_path: Path) -> None:
    done = run("sweep", "--seeds", "2", "--master", "local[1]", "--out", str(tmp_path / "w"))
    assert done.returncode == 2
    assert "pip install 'steadyscale[spark]'" in done.stderr
    assert "Traceback" not in done.stderr
