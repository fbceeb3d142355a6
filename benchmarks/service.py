"""The decision service over loopback HTTP: throughput, bad input, fuzzing, large bodies, 10,000
streams (issue 14's targets). Every figure comes from real `steadyscale serve` processes.

Sections (``--only`` picks some; all by default):

* ``throughput`` (``benchmarks.service_throughput``): `steadyscale serve` and a bare FastAPI
  app whose POST handler does nothing (the ceiling: HTTP, JSON and the framework, no filtering,
  no storage), one uvicorn worker each; client threads (http.client, keep-alive) post for
  ``--seconds`` per scenario; with ``--baseline DIR`` another checkout's service runs the same
  scenarios in the same run. Targets (issue 32): 1-sample POSTs at >= 60 % of the bare
  endpoint's request rate with one client, >= 50 % with four; 100-sample batches at >= 2x the
  baseline's samples/s. The streams run ``tvd``; one more scenario posts to a stream with the
  default filter (``changepoint`` + ``confidence``), whose state is larger.
* ``writepath`` (``benchmarks.service_writepath``): CPU per batch of the write path alone (in
  process, no HTTP), this checkout and ``--baseline``'s.
* ``cpu`` (``benchmarks.service_cpu``): the server's own CPU per 1-sample POST over loopback,
  one keep-alive client, ``--rounds`` rounds of 3,000 POSTs; with ``--baseline`` both
  checkouts serve side by side, rounds A B B A, and the ratios of the round pairs are printed.
* ``load`` (``benchmarks.service_load``): loading a stream after a crash, between two
  checkpoints, at each ``checkpoint_samples`` N up to the largest allowed. Target: <= 50 ms
  at the largest N.
* ``attack`` (``benchmarks.service_attack``): about 140 hand-made bad requests (bodies, values,
  ids, methods, headers). Target: no 5xx; every 4xx body names the field, the value (cut short)
  and what is allowed, is under 64 KB, and leaves the stream as it was; RSS growth per request.
* ``fuzz`` (``benchmarks.service_fuzz``): ``schemathesis run`` (all phases, all checks,
  ``--fuzz-examples`` per operation) against a server; the server's own request counter gives
  the statuses. Target: 0 failures, 0 responses 5xx.
* ``bodies`` (``benchmarks.service_attack``): 16 MiB bodies, declared and chunked, and the
  largest allowed bodies. Targets: a 16 MiB body refused within 1 s; RSS growth under 100 MB for
  any single request.
* ``streams`` (``benchmarks.service_streams``): ``--streams`` streams (10,000), each with a
  decision. Target: /healthz p99 under 50 ms while /metrics and the stream list are fetched in a
  loop; memory per idle stream bounded (the Scaler cache keeps 1,024).
* ``replicas`` (``benchmarks.service_replicas``; issue 15): one replica on SQLite, one on
  PostgreSQL, two on one PostgreSQL, in one run: 100 streams, 1-sample and 100-sample batches, 8
  client threads spread over the replicas, the setups interleaved in ``--rounds`` rounds;
  samples/s (median of the rounds), p99, the CPU the replicas and the machine used. PostgreSQL
  is ``--database-url``'s, else a server started from the local binaries as the tests do
  (tests/service/conftest.py). Target: two replicas deliver more than one on the same database.

    .venv/bin/python -m benchmarks.service                     # everything, about 3 minutes
    .venv/bin/python -m benchmarks.service --only attack,bodies --seconds 2
    .venv/bin/python -m benchmarks.service --only replicas --seconds 5 --rounds 5
    .venv/bin/python -m benchmarks.service --only throughput --baseline /tmp/base  # vs a checkout
    .venv/bin/python -m benchmarks.service --only throughput --baseline /tmp/base --pairs 6
    .venv/bin/python -m benchmarks.service --only cpu --rounds 10 --baseline /tmp/base
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from benchmarks.service_attack import attack, bodies
from benchmarks.service_cpu import server_cpu
from benchmarks.service_fuzz import fuzz
from benchmarks.service_load import crash_load
from benchmarks.service_replicas import replicas
from benchmarks.service_streams import streams
from benchmarks.service_throughput import throughput
from benchmarks.service_writepath import write_path


def main() -> None:
    sections = [
        "throughput",
        "writepath",
        "cpu",
        "load",
        "attack",
        "fuzz",
        "bodies",
        "streams",
        "replicas",
    ]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(sections), help="sections, comma-separated")
    parser.add_argument("--seconds", type=float, default=6.0, help="per scenario (%(default)s)")
    parser.add_argument("--fuzz-examples", type=int, default=100, help="(%(default)s)")
    parser.add_argument("--streams", type=int, default=10_000, help="(%(default)s)")
    parser.add_argument(
        "--database-url", help="PostgreSQL for replicas (default: a server of its own)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="replicas, cpu: (%(default)s)")
    parser.add_argument(
        "--pairs",
        type=int,
        default=0,
        help="throughput: paired rounds of the targets' scenarios after the run (%(default)s)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="throughput, writepath, cpu: another steadyscale checkout measured in the same run",
    )
    args = parser.parse_args()
    chosen = args.only.split(",")
    unknown = set(chosen) - set(sections)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose from {sections}")
    runs: dict[str, Callable[[], None]] = {
        "throughput": lambda: throughput(args.seconds, args.baseline, args.pairs),
        "writepath": lambda: write_path(args.baseline),
        "cpu": lambda: server_cpu(args.baseline, rounds=args.rounds),
        "load": crash_load,
        "attack": attack,
        "fuzz": lambda: fuzz(args.fuzz_examples),
        "bodies": bodies,
        "streams": lambda: streams(args.streams, max(args.seconds, 10.0)),
        "replicas": lambda: replicas(args.seconds, args.rounds, args.database_url),
    }
    for section in sections:
        if section in chosen:
            print(f"== {section}")
            runs[section]()


if __name__ == "__main__":
    main()
