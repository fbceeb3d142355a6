"""The dashboard in a real browser: headless Chromium against a real `steadyscale serve`
(the browser and the page's watcher: tests/service/browser.py, which says where Chromium
comes from and when these tests are skipped).

The main test takes the screenshots the docs show, ``dashboard.png`` and
``dashboard-what-if.png``, into the test's temporary folder, or into the folder
``STEADYSCALE_SCREENSHOTS`` names (``docs/img`` to renew the docs' images): a plain test run
leaves the tree unchanged, though the page shows the time.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from playwright.sync_api import Browser

from tests.service.browser import Watched
from tests.service.test_server import Server

pytestmark = pytest.mark.browser

TOKEN = "dashboard-secret"
# Where the screenshots go: the docs' images only when asked (see the module docstring).
SCREENSHOTS = os.environ.get("STEADYSCALE_SCREENSHOTS")
WINDOW = 900.0  # the page's default window, seconds of t


def volumes(count: int, seed: int) -> list[float]:
    """A job's input: a level that steps between 200 and 550 tuples/s every few minutes, a slow
    swing, and noise (SNR about 1 by amplitude... the kind of series the filter is for)."""
    rng = np.random.default_rng(seed)
    levels = rng.uniform(200.0, 550.0, count // 150 + 1)
    return [
        max(0.0, levels[t // 150] + 40.0 * math.sin(t / 50.0) + float(rng.normal(0.0, 60.0)))
        for t in range(count)
    ]


def feed(client: httpx.Client, stream: str, count: int, seed: int, start: int = 0) -> None:
    """``count`` samples, in batches of 50."""
    series = volumes(start + count, seed)[start:]
    batch = [{"t": float(start + i), "volume": v} for i, v in enumerate(series)]
    for first in range(0, count, 50):
        answer = client.post(f"/v1/streams/{stream}/samples", json={"samples": batch[first:][:50]})
        assert answer.status_code == 200, answer.text


def feed_running(client: httpx.Client, stream: str, count: int, seed: int, lag: int = 5) -> None:
    """One sample at a time, each reporting as running what the decision ``lag`` samples
    earlier asked for: a job that takes ``lag`` seconds to apply a decision."""
    decided = [client.get(f"/v1/streams/{stream}").json()["operators"]] * lag
    for t, volume in enumerate(volumes(count, seed)):
        sample = {"t": float(t), "volume": volume, "running": decided[-lag]}
        answer = client.post(f"/v1/streams/{stream}/samples", json={"samples": [sample]})
        assert answer.status_code == 200, answer.text
        decided.append(answer.json()["operators"])


def in_window(client: httpx.Client, stream: str) -> list[dict[str, Any]]:
    """The decisions the page should draw: those within WINDOW seconds of the last."""
    body = client.get(f"/v1/streams/{stream}/history", params={"limit": 100_000}).json()
    decisions: list[dict[str, Any]] = body["decisions"]
    if not decisions:
        return []
    last = decisions[-1]["t"]
    return [d for d in decisions if d["t"] > last - WINDOW]


def put(client: httpx.Client, stream: str, config: dict[str, Any]) -> None:
    answer = client.put(f"/v1/streams/{stream}", json=config)
    assert answer.status_code == 201, answer.text


def test_every_stream_in_view_is_drawn_with_its_data_behind_a_token(
    browser: Browser, tmp_path: Path
) -> None:
    server = Server(tmp_path / "data", env={"STEADYSCALE_TOKENS": TOKEN})
    images = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
    headers = {"Authorization": f"Bearer {TOKEN}"}
    try:
        with httpx.Client(base_url=server.url, headers=headers, timeout=30.0) as client:
            put(client, "checkout", {"policy": {"capacity": 50.0}, "operators": 4})
            put(client, "orders", {"filter": {"name": "tvd"}, "policy": {"capacity": 50.0}})
            put(client, "payments", {"filter": {"name": "moving_average", "w": 30},
                                     "policy": {"capacity": 40.0}, "operators": 6})  # fmt: skip
            put(client, "refunds", {"policy": {"capacity": 50.0}})
            feed(client, "checkout", 600, seed=1)
            feed_running(client, "orders", 600, seed=2)
            feed(client, "payments", 1200, seed=3)

            watched = Watched(browser, server.url)
            page = watched.page
            page.goto(server.url + "/")
            # Tokens on: the page asks first, and reads no data without one.
            page.locator("#token-form").wait_for(state="visible")
            assert not [url for url in watched.requests if "/v1/" in url]
            page.fill("#token", TOKEN)
            page.click("#token-form button")
            watched.wait_until_drawn(4)

            cards = {card["stream"]: card for card in watched.cards()}
            assert list(cards) == ["checkout", "orders", "payments", "refunds"]
            for stream, card in cards.items():
                expected = in_window(client, stream)
                assert int(card["points"]) == len(expected), stream
                scalings = [d for d in expected if d["action"] != "none"]
                assert int(card["scalings"]) == len(scalings), stream
                reported = [d for d in expected if d["running"] is not None]
                assert int(card["running"]) == len(reported), stream
            # payments has 1,200 s of samples: the 15-minute window shows the last 900.
            assert int(cards["payments"]["points"]) == 900
            assert page.locator('section[data-stream="refunds"]').inner_text().count("No sample")

            for stream in ("checkout", "orders", "payments"):
                drawn = watched.pixels(stream)
                assert min(drawn["raw"], drawn["filtered"], drawn["decided"]) > 200, (stream, drawn)
                if stream == "orders":
                    assert drawn["running"] > 200, drawn
                else:
                    assert drawn["running"] == 0, (stream, drawn)
                assert drawn["what-if"] == 0, (stream, drawn)

            # What if payments had TVD instead of its moving average: the 900 samples in view.
            tvd = {"filter": {"name": "tvd"}, "policy": {"capacity": 40.0}, "operators": 6}
            card = page.locator('section[data-stream="payments"]')
            card.locator(".what-if-open").click()
            card.locator("textarea").fill(json.dumps(tvd))
            card.locator(".what-if-run").click()
            card.locator(".what-if[data-points]").wait_for()
            since = in_window(client, "payments")[0]["t"] - 1.0
            replayed = client.post(
                "/v1/streams/payments/what-if", params={"since": since}, json=tvd
            ).json()
            assert card.locator(".what-if").get_attribute("data-points") == "900"
            summary = card.locator(".what-if-summary").inner_text()
            assert f"what if: {replayed['scaling_operations']} scaling operations" in summary
            decided_in_view = int(cards["payments"]["scalings"])
            assert f"as decided: {decided_in_view} and" in summary
            assert watched.pixels("payments", ".what-if")["what-if"] > 500
            images.mkdir(parents=True, exist_ok=True)
            card.screenshot(path=str(images / "dashboard-what-if.png"))

            # Live: new samples are drawn without a reload, a first sample too.
            feed(client, "checkout", 60, seed=1, start=600)
            feed(client, "refunds", 50, seed=4)
            page.wait_for_function(
                """() => {
                    const points = id => document.querySelector(`section[data-stream=${id}]`)
                        .dataset.drawn;
                    return points('checkout') === '660' && points('refunds') === '50';
                }""",
                timeout=30_000,  # the page asks every 5 s; the machine may be busy
            )

            # The token is kept for the tab: a reload asks no more.
            watched.reload()
            watched.wait_until_drawn(4)
            assert page.locator("#token-form").is_hidden()

            # The reason of a scaling operation, on hover over its marker (one with no other
            # within 15 s, so that no neighbour's marker is as near the cursor).
            operations = [d for d in in_window(client, "checkout") if d["action"] != "none"]
            scaling = next(
                d
                for d in reversed(operations)
                if d["action"] == "up"
                and all(other is d or abs(other["t"] - d["t"]) >= 15.0 for other in operations)
            )
            text = watched.hover_scaling("checkout", scaling["t"])
            assert f"up {scaling['previous']} → {scaling['operators']}" in text
            assert scaling["reason"] in text
            page.screenshot(path=str(images / "dashboard.png"), full_page=True)

            # A stream replaced (PUT ?reset=true) is drawn again from its new samples, whether
            # its configuration changed (orders) or not (refunds, now with fewer samples),
            # once the page lists the streams again (every 30 s; asked for at once here).
            for stream, config, count in (
                ("orders", {"policy": {"capacity": 40.0}}, 40),
                ("refunds", {"policy": {"capacity": 50.0}}, 10),
            ):
                reset = client.put(f"/v1/streams/{stream}?reset=true", json=config)
                assert reset.status_code in (200, 201), reset.text
                feed(client, stream, count, seed=5)
            page.evaluate(
                "() => { window.steadyscaleDashboard.state.listedAt = 0;"
                " return window.steadyscaleDashboard.tick(); }"
            )
            page.wait_for_function(
                """() => {
                    const points = id => document.querySelector(`section[data-stream=${id}]`)
                        .dataset.drawn;
                    return points('orders') === '40' && points('refunds') === '10';
                }""",
                timeout=30_000,
            )
            assert watched.problems == []
    finally:
        server.stop()


def test_a_thousand_streams_a_page_at_a_time(browser: Browser, tmp_path: Path) -> None:
    server = Server(tmp_path / "data")
    try:
        with httpx.Client(base_url=server.url, timeout=30.0) as client:
            ids = [f"stream-{number:04d}" for number in range(1000)]
            for stream in ids:
                put(client, stream, {"filter": {"name": "ewma", "alpha": 0.1},
                                     "policy": {"capacity": 50.0}})  # fmt: skip
                samples = [{"t": float(t), "volume": 100.0 + 10.0 * (t % 7)} for t in range(30)]
                answer = client.post(f"/v1/streams/{stream}/samples", json={"samples": samples})
                assert answer.status_code == 200, answer.text

        watched = Watched(browser, server.url)
        page = watched.page
        start = time.perf_counter()
        page.goto(server.url + "/")
        watched.wait_until_drawn(8)
        first_page = time.perf_counter() - start
        assert [card["stream"] for card in watched.cards()] == ids[:8]
        assert all(card["points"] == "30" for card in watched.cards())
        assert page.inner_text("#page-info") == "page 1 of 125 · streams 1–8 of 1000"
        # Charts for the streams in view only.
        assert page.locator("canvas").count() == 8

        start = time.perf_counter()
        page.click("#next")
        watched.wait_until_drawn(8)
        next_page = time.perf_counter() - start
        assert [card["stream"] for card in watched.cards()] == ids[8:16]
        assert page.locator("canvas").count() == 8

        start = time.perf_counter()
        page.fill("#search", "stream-09")
        watched.wait_until_drawn(8)
        search = time.perf_counter() - start
        assert [card["stream"] for card in watched.cards()] == ids[900:908]
        assert page.inner_text("#page-info") == (
            "page 1 of 13 · streams 1–8 of 100 matching (1000 in all)"
        )
        page.fill("#search", "stream-0999")
        watched.wait_until_drawn(1)
        assert [card["stream"] for card in watched.cards()] == ["stream-0999"]

        page.fill("#search", "")
        page.select_option("#page-size", "32")
        watched.wait_until_drawn(32)
        assert page.locator("canvas").count() == 32
        print(  # noqa: T201 - the figures of the run, for docs/dashboard.md
            f"1,000 streams: first page drawn {first_page:.2f} s after load, next page "
            f"{next_page:.2f} s, search {search:.2f} s"
        )
        # Generous: a page of 8 charts is 8 small requests; this catches drawing them all.
        assert max(first_page, next_page, search) < 5.0
        assert watched.problems == []
    finally:
        server.stop()
