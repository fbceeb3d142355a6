"""/healthz notices a process that answers but cannot work: every worker thread held, or an
event loop that runs far behind its timers (issue 32, item 1)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import anyio.to_thread
from fastapi.testclient import TestClient

from service.app import create_app
from service.health import TICK, LoopWatch
from service.settings import Settings


def test_healthz_is_503_while_every_worker_thread_is_held(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, health_timeout=0.3)
    with TestClient(create_app(settings)) as client:
        assert client.get("/healthz").status_code == 200
        assert client.portal is not None
        limiter = client.portal.call(_default_limiter)
        held = threading.Event()
        tokens = int(limiter.total_tokens)
        futures = [client.portal.start_task_soon(_hold, held) for _ in range(tokens)]
        try:
            while limiter.borrowed_tokens < tokens:
                time.sleep(0.01)
            stuck = client.get("/healthz")
            assert stuck.status_code == 503, stuck.text
            assert "worker thread" in stuck.json()["detail"]
            assert "health_timeout" in stuck.json()["detail"]
        finally:
            held.set()
            for future in futures:
                future.result(timeout=5)
        assert client.get("/healthz").status_code == 200


async def _default_limiter() -> anyio.CapacityLimiter:
    return anyio.to_thread.current_default_thread_limiter()


async def _hold(held: threading.Event) -> None:
    await anyio.to_thread.run_sync(held.wait)


def test_healthz_is_503_while_the_event_loop_runs_behind_and_200_once_it_catches_up(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path, health_timeout=0.3)
    with TestClient(create_app(settings)) as client:
        assert client.get("/healthz").status_code == 200
        assert client.portal is not None
        holding = threading.Event()
        hold = client.portal.start_task_soon(_hold_the_loop, holding, 6 * TICK)
        assert holding.wait(timeout=5)
        # Sent while the loop is held: answered once it runs again, before the watch's next
        # tick forgets how late the last one woke.
        began = time.monotonic()
        behind = client.get("/healthz")
        assert time.monotonic() - began > 2 * TICK
        assert behind.status_code == 503, behind.text
        assert "event loop" in behind.json()["detail"]
        assert "health_timeout" in behind.json()["detail"]
        hold.result(timeout=5)
        time.sleep(3 * TICK)
        assert client.get("/healthz").status_code == 200


async def _hold_the_loop(holding: threading.Event, seconds: float) -> None:
    holding.set()
    time.sleep(seconds)  # holds the loop, as CPU work on it would


def test_the_watch_sees_a_loop_held_and_forgets_it_once_it_runs_again() -> None:
    async def main() -> tuple[float, float, float]:
        with LoopWatch() as watch:
            await asyncio.sleep(2 * TICK)
            running = watch.behind()
            time.sleep(4 * TICK)  # holds the loop, as CPU work on it would
            held = watch.behind()
            await asyncio.sleep(3 * TICK)
            return running, held, watch.behind()

    running, held, again = asyncio.run(main())
    assert running < TICK / 2
    assert held > 2 * TICK
    assert again < TICK / 2
