"""schemathesis's command line against the service (``benchmarks.service --only fuzz``;
issue 14).

``schemathesis run`` (all phases, all checks, ``examples`` per operation) against a server, with
the settings and hooks the test suite uses (tests/service/schemathesis.toml,
tests/service/fuzz_hooks.py); the server's own request counter gives the statuses. Target: 0
failures, 0 responses 5xx.

    .venv/bin/python -m benchmarks.service --only fuzz --fuzz-examples 400
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.served import ROOT, Served


def fuzz(examples: int) -> None:
    """schemathesis's command line, every phase and check, against a server."""
    config = ROOT / "tests" / "service" / "schemathesis.toml"
    with tempfile.TemporaryDirectory() as data, Served(Path(data) / "data") as server:
        command = [str(Path(sys.executable).with_name("schemathesis")), "--config-file",
                   str(config), "run", f"{server.url}/openapi.json", "--checks", "all",
                   "--max-examples", str(examples), "--seed", "14", "--no-color"]  # fmt: skip
        env = {
            **os.environ,
            "SCHEMATHESIS_HOOKS": "tests.service.fuzz_hooks",
            "PYTHONPATH": str(ROOT),
        }
        began = time.perf_counter()
        # Run from the temporary directory: schemathesis keeps a cache in ./.schemathesis.
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=data)
        seconds = time.perf_counter() - began
        statuses = server.statuses()
    summary = re.search(r"(\d+) generated, (.*)", done.stdout)
    cases = f"{summary[1]} test cases, {summary[2]}" if summary else "no summary"
    fivexx = sum(count for status, count in statuses.items() if status.startswith("5"))
    print(f"schemathesis run (seed 14, {examples} examples per operation, all phases and checks): "
          f"{cases}; exit status {done.returncode}; {seconds:.0f} s")  # fmt: skip
    print(f"requests the server answered: {sum(statuses.values()):,}; by status "
          f"{dict(sorted(statuses.items()))}; 5xx: {fivexx}")  # fmt: skip
    if done.returncode != 0:
        print(done.stdout[-4000:])
