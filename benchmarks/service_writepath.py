"""The write path alone: CPU per batch of ``StreamService.post_samples`` on SQLite, in process,
no HTTP (``benchmarks.service --only writepath``; issue 32).

What a batch costs the service between its body being parsed and its answer being built: the
Scaler, the duplicate check, the commit (and, before issue 32, the Scaler's state exported and
encoded at every commit). Measured as CPU time, which hardly moves with what else the machine
runs, unlike request rates. With ``baseline`` (another steadyscale checkout) the same code runs
on that checkout's service, one after the other, so the two compare in one run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Run in a fresh interpreter whose packages come from the checkout measured (PYTHONPATH): only
# the API both sides have (StreamService, Storage, the models).
_MEASURE = """
import json, random, tempfile, time
from pathlib import Path
from service.models import Sample, StreamConfig
from service.storage import Storage
from service.streams import StreamService

CONFIGS = {
    "tvd": {"filter": {"name": "tvd"}, "policy": {"capacity": 50.0, "min_operators": 1},
            "guards": [{"name": "hysteresis", "band": 0.02}], "operators": 4},
    "default": {"policy": {"capacity": 50.0, "min_operators": 1}, "operators": 4},
}
chance = random.Random(1)
figures = {}
for name, config in CONFIGS.items():
    for batch, count in ((1, 3000), (100, 60)):
        service = StreamService(Storage(Path(tempfile.mkdtemp()) / "db"), retention=100_000,
                                max_batch=10_000)
        service.put("s", StreamConfig.model_validate(config))
        clock = [0]

        def post():
            start = clock[0]
            clock[0] += batch
            service.post_samples("s", [Sample(t=float(start + i),
                                              volume=max(0.0, chance.gauss(300.0, 50.0)))
                                       for i in range(batch)])

        for _ in range(300 if batch == 1 else 20):  # a stream that has run a while
            post()
        began = time.process_time()
        for _ in range(count):
            post()
        figures[f"{name}, {batch}"] = (time.process_time() - began) / count
print(json.dumps(figures))
"""


def measured(code: Path) -> dict[str, float]:
    """CPU seconds per batch, by filter and batch size, with the service of ``code``."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run([sys.executable, "-c", _MEASURE], env=env, cwd=code, check=True,
                          capture_output=True, text=True)  # fmt: skip
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def write_path(baseline: Path | None) -> None:
    """The table: µs of CPU per batch and per sample, this checkout (and ``baseline``)."""
    here = Path(__file__).resolve().parent.parent
    mine = measured(here)
    theirs = measured(baseline) if baseline is not None else None
    compared = f" {'baseline µs/batch':>17s} {'baseline / this':>15s}" if theirs else ""
    print(f"{'filter, samples per batch':26s} {'µs/batch':>9s} {'µs/sample':>9s}{compared}")
    for key, seconds in mine.items():
        batch = int(key.rsplit(", ", 1)[1])
        line = f"{key:26s} {seconds * 1e6:9.0f} {seconds / batch * 1e6:9.1f}"
        if theirs is not None:
            line += f" {theirs[key] * 1e6:17.0f} {theirs[key] / seconds:15.2f}"
        print(line)
