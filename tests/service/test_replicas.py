"""Two replicas of `steadyscale serve` on one PostgreSQL, one of them SIGKILLed again and again.

What a load balancer in front of two replicas does, played by the client: batches alternate
between the replicas; a batch that got no answer (the replica was killed with it in flight) or
a 503 is sent again to the other replica. Whatever the kills cut, each stream's history must be
exactly what one Scaler fed every sample once, in order, computes: nothing lost, nothing
applied twice.
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.service.test_server import STREAM, Server, history, samples, uninterrupted

STREAMS = ["orders", "clicks", "payments"]
# Samples a stream may get at most; the run stops sending once the replica was killed KILLS
# times, and each stream is checked against what it sent.
SAMPLES = 40_000
BATCH = 8
KILLS = 4


class Replicas:
    """Two servers on one database, given as ``--database-url`` to the first and as
    ``STEADYSCALE_DATABASE_URL`` to the second; ``urls`` stay the same across restarts."""

    def __init__(self, tmp_path: Path, database_url: str) -> None:
        self._data = tmp_path
        self._env = {"STEADYSCALE_DATABASE_URL": database_url}
        self.servers = [
            Server(tmp_path / "data0", options=["--database-url", database_url]),
            Server(tmp_path / "data1", env=self._env),
        ]
        self.urls = [server.url for server in self.servers]

    def kill_and_restart_second(self) -> None:
        victim = self.servers[1]
        victim.kill()
        self.servers[1] = Server(self._data / "data1", env=self._env, port=victim.port)

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


def send(replicas: Replicas, stream: str, stop: threading.Event, tallies: dict[str, int]) -> None:
    """Batches of ``stream`` until ``stop``, alternating replicas, resending to the other on
    failure; every fifth acknowledged batch is also resent to the other replica, as a client
    that missed the answer would, and must come back a duplicate. ``tallies[stream]`` is the
    number of samples acknowledged."""
    batches = samples(SAMPLES, seed=STREAMS.index(stream))
    clients = [httpx.Client(base_url=url, timeout=10.0) for url in replicas.urls]
    path = f"/v1/streams/{stream}/samples"
    try:
        for number, start in enumerate(range(0, SAMPLES, BATCH)):
            if stop.is_set():
                break
            time.sleep(0.005)
            batch = {"samples": batches[start : start + BATCH]}
            target = number % 2
            deadline = time.monotonic() + 60.0
            while True:
                try:
                    answer = clients[target].post(path, json=batch)
                except httpx.TransportError:
                    answer = None
                if answer is not None and answer.status_code == 200:
                    break
                assert answer is None or answer.status_code == 503, answer.text
                assert time.monotonic() < deadline, f"{stream}: no replica took batch {number}"
                tallies["resent"] += 1
                target = 1 - target
                time.sleep(0.05)
            tallies[stream] = start + BATCH
            if number % 5 == 0:
                try:
                    again = clients[1 - target].post(path, json=batch)
                except httpx.TransportError:
                    continue
                if again.status_code == 200:
                    body: dict[str, Any] = again.json()
                    assert (body["accepted"], body["duplicates"]) == (0, len(batch["samples"]))
                    tallies["duplicates"] += 1
    finally:
        for client in clients:
            client.close()


def test_two_replicas_one_killed_repeatedly_lose_nothing_and_double_nothing(
    tmp_path: Path, postgres_url: str
) -> None:
    replicas = Replicas(tmp_path, postgres_url)
    try:
        with httpx.Client(base_url=replicas.urls[0], timeout=10.0) as client:
            for stream in STREAMS:
                assert client.put(f"/v1/streams/{stream}", json=STREAM).status_code == 201
        tallies = {"resent": 0, "duplicates": 0}
        stop = threading.Event()
        senders = [
            threading.Thread(target=send, args=(replicas, stream, stop, tallies))
            for stream in STREAMS
        ]
        for sender in senders:
            sender.start()
        chance = random.Random(15)
        for _ in range(KILLS):
            time.sleep(chance.uniform(0.2, 0.6))
            replicas.kill_and_restart_second()
        time.sleep(0.5)  # batches through the restarted replica too
        stop.set()
        for sender in senders:
            sender.join()
        assert tallies["resent"] > 0 and tallies["duplicates"] > 0
        with httpx.Client(base_url=replicas.urls[1], timeout=10.0) as client:
            for stream in STREAMS:
                stored = history(client, stream)
                sent = samples(SAMPLES, seed=STREAMS.index(stream))[: tallies[stream]]
                assert len(sent) > 100, f"{stream}: too few samples sent to mean anything"
                expected = uninterrupted(sent)
                times = [d["t"] for d in stored]
                assert times == [t for t, _, _ in expected], "a sample lost or applied twice"
                assert [(d["t"], d["filtered"], d["operators"]) for d in stored] == expected
    finally:
        replicas.stop()
