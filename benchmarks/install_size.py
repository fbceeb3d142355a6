"""How much each install of steadyscale puts on disk, measured in fresh virtual environments.

For each extra asked for (``base`` is the embedding install, no extra), a new venv under a
temporary folder gets ``pip install <this checkout>[extra]`` from the package registry, and the
script prints the size of the whole environment (Python's own files are links or copies of a
few MB; pip itself is counted, as a user's venv has it) and of its site-packages, and the
largest distributions in it (``--top``), then checks that the install does what it is for:
``base`` builds the default Scaler and decides.

    .venv/bin/python -m benchmarks.install_size                 # base only, ~1 min
    .venv/bin/python -m benchmarks.install_size base plots service
    .venv/bin/python -m benchmarks.install_size service --top 12
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).parents[1]
TARGET_MB = 150.0  # the base install's target (issue 19)
CHECK = (
    "from scaling import Scaler; s = Scaler.from_spec({'policy': {'capacity': 50.0}}); "
    "[s.observe(300.0 + (i % 7), float(i)) for i in range(50)]; print(s.operators)"
)
# Run by the new venv's Python: each installed distribution's name and bytes on disk.
DISTRIBUTIONS = (
    "import json, os; from importlib.metadata import distributions as found\n"
    "def size(d):\n"
    "    files = [d.locate_file(f) for f in d.files or []]\n"
    "    return sum(os.path.getsize(f) for f in files if os.path.isfile(f))\n"
    "print(json.dumps({d.metadata['Name']: size(d) for d in found()}))"
)


def size_mb(folder: Path) -> float:
    total = 0
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_size
    return total / 1e6


def largest(python: Path, count: int) -> list[tuple[str, float]]:
    """The ``count`` largest distributions installed for ``python``, MB, largest first."""
    done = subprocess.run([str(python), "-c", DISTRIBUTIONS], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    sizes = {name: size / 1e6 for name, size in json.loads(done.stdout).items()}
    return sorted(sizes.items(), key=lambda item: -item[1])[:count]


def measure(
    extra: str, work: Path, top: int = 0
) -> tuple[float, float, float, list[tuple[str, float]]]:
    venv = work / extra
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    target = str(ROOT) if extra == "base" else f"{ROOT}[{extra}]"
    started = time.perf_counter()
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", target],
        check=True,
        env={**os.environ, "PIP_NO_CACHE_DIR": "0"},
    )
    seconds = time.perf_counter() - started
    if extra == "base":
        # The embedding install decides with the default, with no filterpy and no scipy.
        done = subprocess.run([str(python), "-c", CHECK], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    site = next((venv / "lib").glob("python*/site-packages"))
    return size_mb(venv), size_mb(site), seconds, largest(python, top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("extras", nargs="*", default=["base"], help="base, plots, service, all")
    parser.add_argument("--top", type=int, default=0, help="list the largest distributions")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print(f"{'install':<10} {'venv MB':>9} {'site-packages MB':>17} {'install s':>10}")
        for extra in args.extras:
            venv, site, seconds, biggest = measure(extra, Path(folder), args.top)
            print(f"{extra:<10} {venv:9.1f} {site:17.1f} {seconds:10.1f}")
            for name, size in biggest:
                print(f"  {name:<24} {size:8.1f} MB")
            if extra == "base":
                verdict = "met" if venv < TARGET_MB else "NOT met"
                print(f"base target: venv under {TARGET_MB:g} MB: {verdict}")


if __name__ == "__main__":
    main()
