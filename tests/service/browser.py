"""A headless Chromium for the tests that drive the dashboard, and a page watched for what
should not happen on it.

Chromium is Debian's (``apt-get install chromium``, which ``make test`` does when it can),
driven by Playwright without a browser download of its own; ``STEADYSCALE_CHROMIUM`` names
another executable. Where there is none, the session header says so and each test that asks
for ``browser`` is skipped as "browser NOT TESTED" with the reason (``-ra`` lists them).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.not_tested import not_tested

# What the page draws each series in (dashboard.css), as RGB.
COLOURS = {
    "raw": (0x9A, 0xA4, 0xAE),
    "filtered": (0x1F, 0x6F, 0xEB),
    "decided": (0xD9, 0x48, 0x0F),
    "running": (0x2B, 0x8A, 0x3E),
    "what-if": (0x82, 0x50, 0xDF),
}


def chromium() -> tuple[str | None, str]:
    """The Chromium executable, or ``None`` and why there is none."""
    given = os.environ.get("STEADYSCALE_CHROMIUM")
    for name in [given] if given else ["chromium", "chromium-browser"]:
        found = shutil.which(name)
        if found:
            return found, ""
    where = given or "chromium or chromium-browser on PATH"
    return None, (
        f"no Chromium ({where}): install Debian's chromium package (apt-get install chromium, "
        "which make test does as root), or set STEADYSCALE_CHROMIUM"
    )


def report_header() -> str:
    """The session header's line (tests/service/conftest.py)."""
    found, why = chromium()
    return f"browser: NOT TESTED, {why}" if found is None else f"browser: headless {found}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable, why = chromium()
    if executable is None:
        not_tested("browser", why)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable)
        yield launched
        launched.close()


class Watched:
    """A page, and everything on it that should not happen: console errors, uncaught
    exceptions, failed or refused requests, requests to anywhere but the service."""

    def __init__(self, browser: Browser, origin: str, width: int = 1400) -> None:
        self.page: Page = browser.new_page(viewport={"width": width, "height": 1000})
        self.problems: list[str] = []
        self.requests: list[str] = []
        self.reloading = False
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.problems.append(f"exception: {error}"))
        self.page.on("requestfailed", self._failed)
        self.page.on("request", lambda request: self._request(request.url, origin))
        self.page.on("response", self._response)

    def reload(self) -> None:
        """Reload the page. A poll in flight when it starts is aborted by the browser: that is
        the reload, not a failure of the page (CI saw one, a history request, at stop 47)."""
        self.reloading = True
        try:
            self.page.reload()
        finally:
            self.reloading = False

    def _failed(self, request: Any) -> None:
        failure = request.failure or ""
        if not (self.reloading and "ERR_ABORTED" in failure):
            self.problems.append(f"failed: {request.url} ({failure})")

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.problems.append(f"console error: {message.text}")

    def _request(self, url: str, origin: str) -> None:
        self.requests.append(url)
        if not url.startswith(origin + "/"):
            self.problems.append(f"request outside the service: {url}")

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self.problems.append(f"{response.status} for {response.url}")

    def cards(self) -> list[dict[str, str]]:
        """Each stream card in view: its data attributes."""
        return list(
            self.page.eval_on_selector_all(
                "section.stream", "cards => cards.map(card => ({...card.dataset}))"
            )
        )

    def wait_until_drawn(self, count: int, timeout: float = 30_000) -> None:
        """Until ``count`` cards are in view and every one is drawn."""
        self.page.wait_for_function(
            """count => {
                const cards = [...document.querySelectorAll('section.stream')];
                const drawn = card => card.dataset.points !== undefined
                    && (card.dataset.points === '0' || card.dataset.drawn === card.dataset.points);
                return cards.length === count && cards.every(drawn);
            }""",
            arg=count,
            timeout=timeout,
        )

    def pixels(self, stream: str, chart: str = ".chart") -> dict[str, int]:
        """How many pixels of the stream's chart (``chart``: a selector within its card) are
        drawn in each series' colour."""
        counts: dict[str, int] = self.page.evaluate(
            """([stream, chart, colours]) => {
                const card = document.querySelector(`section.stream[data-stream="${stream}"]`);
                const canvas = card.querySelector(`${chart} canvas`);
                const context = canvas.getContext('2d');
                const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
                const counts = Object.fromEntries(Object.keys(colours).map(name => [name, 0]));
                for (let i = 0; i < data.length; i += 4) {
                    for (const [name, [r, g, b]] of Object.entries(colours)) {
                        const away = Math.abs(data[i] - r) + Math.abs(data[i + 1] - g)
                            + Math.abs(data[i + 2] - b);
                        if (away < 24 && data[i + 3] > 200) counts[name] += 1;
                    }
                }
                return counts;
            }""",
            [stream, chart, COLOURS],
        )
        return counts

    def hover_scaling(self, stream: str, t: float) -> str:
        """Move the mouse onto the marker of the scaling operation at ``t``; the tooltip."""
        x, y = self.page.evaluate(
            """([stream, t]) => {
                const entry = window.steadyscaleDashboard.state.charts.get(stream);
                const row = entry.rows.find(row => row.t === t);
                const box = entry.plot.over.getBoundingClientRect();
                return [box.left + entry.plot.valToPos(t, 'x'),
                        box.top + entry.plot.valToPos(row.operators, 'n')];
            }""",
            [stream, t],
        )
        self.page.mouse.move(x, y)
        tooltip = self.page.locator("#tooltip")
        tooltip.wait_for(state="visible", timeout=5000)
        return tooltip.inner_text()
