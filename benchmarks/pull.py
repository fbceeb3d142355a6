"""Pull mode's own cost: how many streams one replica can poll, Prometheus aside.

``--streams`` streams (1,000) with a source of two queries (volume and backlog) on a SQLite
file; the poller (``service.pull.poller.Poller``) polls every one of them at ``--rounds``
evaluation times, against a Prometheus answered in-process (httpx's MockTransport, so the
figure is steadyscale's share: building the requests, reading the answers, validating the
sample, applying and committing it, recording the health). Prints the polls per second and the
CPU per poll, and the share of one core that polling every stream every 15 s takes.

    .venv/bin/python -m benchmarks.pull                       # about 25 s
    .venv/bin/python -m benchmarks.pull --streams 200 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import httpx

from service.models import StreamConfig
from service.pull.health import Health
from service.pull.poller import Poller
from service.pull.settings import PullSettings
from service.storage import Storage
from service.streams import StreamService

START = 1_700_000_100.0
INTERVAL = 15.0


def answer(request: httpx.Request) -> httpx.Response:
    value = 300.0 + float(request.url.params["time"]) % 97
    result = [{"metric": {}, "value": [0, str(value)]}]
    return httpx.Response(
        200, json={"status": "success", "data": {"resultType": "vector", "result": result}}
    )


async def poll_rounds(poller: Poller, rounds: int, clock: list[float]) -> list[float]:
    seconds = []
    for round_number in range(rounds):
        clock[0] = START + round_number * INTERVAL + 1.0
        began = time.perf_counter()
        await asyncio.gather(*await poller.tick())
        seconds.append(time.perf_counter() - began)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        storage = Storage(Path(directory) / "steadyscale.db")
        streams = StreamService(storage, retention=1000, max_batch=100)
        source = {"prometheus": {"volume": "sum(rate(x[1m]))", "backlog": "sum(lag)"}}
        config = StreamConfig.model_validate({"policy": {"capacity": 50}, "source": source})
        for number in range(args.streams):
            streams.put(f"stream-{number:05d}", config)
        clock = [START]
        settings = PullSettings(prometheus_url="http://prometheus:9090")

        async def run() -> list[float]:
            transport = httpx.MockTransport(answer)
            async with httpx.AsyncClient(transport=transport) as client:
                poller = Poller(streams, settings, Health(), client, lambda: clock[0])
                return await poll_rounds(poller, args.rounds, clock)

        cpu = time.process_time()
        seconds = asyncio.run(run())
        cpu = time.process_time() - cpu
        stored = sum(
            len(streams.history(f"stream-{n:05d}", None, 100)) for n in range(args.streams)
        )
        storage.close()
    polls = args.streams * args.rounds
    assert stored == polls, f"{stored} samples stored for {polls} polls"
    per_poll = cpu / polls
    print(
        f"{args.streams} streams x {args.rounds} evaluation times: {polls} polls, each stored once"
    )
    print(f"round (every stream polled once): median {sorted(seconds)[len(seconds) // 2]:.2f} s")
    print(f"polls per second: {polls / sum(seconds):.0f}; CPU per poll: {1000 * per_poll:.2f} ms")
    share = 100 * per_poll * args.streams / INTERVAL
    print(f"every stream every {INTERVAL:g} s takes {share:.1f} % of one core")


if __name__ == "__main__":
    main()
