"""The ``steadyscale`` command line: one module per command, one style across them.

* ``serve`` runs the decision service (``service.app``) under uvicorn: the one place the
  command line reaches the service (``simulator.cli.serve``).
* ``denoise`` runs denoisers over a volume series (a CSV file, or the paper workload with noise)
  and writes the filtered series, a plot and a summary.
* ``simulate`` scales one workload (or trace) at one noise level with one or more filters and
  writes the timeline, the scaling metrics of each filter and a plot.
* ``paper`` runs the paper's experiment over many seeds, and the parameter sweep beyond it, on
  Spark, and writes tables (markdown, CSV) and figures (``simulator.experiments.paper``).
* ``sweep`` runs any grid of workloads × SNRs × filters × guards × seeds on Spark, resumably,
  and aggregates it there (``simulator.experiments.sweep``).
* ``compare`` runs steadyscale and the seed systems' policies (HPA, DS2, Dhalion, Varga,
  seed-000 rules, StreamCloud, ELYSIUM) on the queue model, on Spark
  (``simulator.experiments.compare``).
* ``trace`` turns event records into a volume trace with a Spark job; ``events`` writes a
  synthetic event log to try it on (``simulator.spark.events``).

The style, the same in every command (``simulator.cli.options``): an option that takes a list
is repeatable and each use takes one or more values (``--snr 1 5 10`` is ``--snr 1 --snr 5
--snr 10``); filters, guards and policies are written in the one spec grammar
(``simulator.experiments.specs``); options are never abbreviated; a mistake is answered with
the usage of the command it was made in. ``paper``, ``sweep``, ``compare`` and ``trace`` take
``--master`` (any Spark master URL, ``local[*]`` by default) and ``--verbose``; what they need
(Java 17, the ``[spark]`` extra) is checked before Spark starts and refused in one line. A
command whose optional dependency is missing names the extra that installs it (``EXTRAS``).

Progress, on stderr: ``sweep`` and ``compare`` a bar over the cells when stderr is a terminal
(tqdm's own rule), a line per batch otherwise; ``paper`` its own bars; ``simulate`` a bar per
filter on a terminal and nothing otherwise, so that logs and pipes stay clean.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from simulator.cli import compare, denoise, events, paper, serve, simulate, sweep, trace
from simulator.cli.options import EXTRAS, Parser
from simulator.spark.checks import VERBOSE_ENV, SparkUnavailable

COMMANDS = (serve, denoise, simulate, paper, sweep, compare, trace, events)
"""Each module adds its subcommand (``add``), whose ``run`` returns the exit status."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``steadyscale`` with the arguments ``argv`` (default: ``sys.argv[1:]``).

    Returns the exit status: 0 on success, 2 when an input or a spec is invalid (the message
    goes to stderr, without a traceback, after the command's name) or an option is malformed
    (after the usage of the command it was given to).
    """
    try:
        args = parser().parse_args(argv)
    except SystemExit as done:  # --help, --version, or a malformed option (usage printed)
        return done.code if isinstance(done.code, int) else 2
    if getattr(args, "verbose", False):
        os.environ[VERBOSE_ENV] = "1"
    try:
        return int(args.run(args))
    except (OSError, ValueError, SparkUnavailable) as error:
        print(f"steadyscale {args.command}: error: {error}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:
        extra = EXTRAS.get((error.name or "").partition(".")[0])
        if extra is None:
            raise
        print(f"steadyscale {args.command}: error: {error.name} is not installed; "
              f"pip install 'steadyscale[{extra}]'", file=sys.stderr)  # fmt: skip
        return 2
    except Exception as error:
        # Spark's own errors (a Spark SQL analysis error, a failed job) arrive as PySpark or
        # py4j exceptions with a page of Java trace in them: their first line says what failed.
        if not type(error).__module__.startswith(("pyspark", "py4j")):
            raise
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        print(f"steadyscale {args.command}: Spark failed: {first} (--verbose shows Spark's log)",
              file=sys.stderr)  # fmt: skip
        return 1


def parser() -> argparse.ArgumentParser:
    """The whole command line: ``--version`` and every command of ``COMMANDS``."""
    top = Parser(
        prog="steadyscale", description="Denoise stream input volume before threshold scaling."
    )
    top.add_argument("--version", action="version", version=f"steadyscale {_version()}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add(commands)
    return top


def _version() -> str:
    try:
        return version("steadyscale")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "(not installed)"
