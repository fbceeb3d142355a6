"""The dashboard shows a polled stream's source: fine, then failing with Prometheus' message
and the fallback (headless Chromium against a real `steadyscale serve`, polling a small fake
Prometheus served over HTTP by the test; see tests/service/test_dashboard_browser.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser

from tests.service.browser import Watched
from tests.service.pull.test_real_prometheus import failed, wait_for
from tests.service.test_server import Server

pytestmark = pytest.mark.browser


class FakePrometheusHandler(BaseHTTPRequestHandler):
    """``/api/v1/query``: the scalar 320, or, while ``down`` is set, Prometheus' 503 error."""

    down = threading.Event()

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.down.is_set():
            status, body = 503, {"status": "error", "errorType": "timeout", "error": "overloaded"}
        else:
            status = 200
            body = {"status": "success", "data": {"resultType": "scalar", "result": [0, "320"]}}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def fake_prometheus() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakePrometheusHandler)
    FakePrometheusHandler.down.clear()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_the_page_shows_the_source_and_its_failures(
    browser: Browser,  # noqa: F811 (the fixture imported above)
    fake_prometheus: str,
    tmp_path: Path,
) -> None:
    server = Server(tmp_path / "data", env={"STEADYSCALE_PROMETHEUS_URL": fake_prometheus})
    try:
        source = {
            "prometheus": {"volume": "v", "interval": 1},
            "fallback": {"failures": 2, "operators": 3},
        }
        body = {"filter": {"name": "raw"}, "policy": {"capacity": 50}, "source": source}
        assert httpx.put(f"{server.url}/v1/streams/orders", json=body).status_code == 201
        watched = Watched(browser, server.url)
        watched.page.goto(server.url + "/")
        facts = watched.page.locator("section.stream .facts")
        facts.filter(has_text="source ok").wait_for(timeout=20_000)
        assert "decided 7" in facts.inner_text()  # ceil(320 / 50)
        FakePrometheusHandler.down.set()
        wait_for(lambda: failed(httpx.Client(base_url=server.url), 2), 20, "2 failed polls")
        watched.page.reload()  # else at the page's next listing of the streams (30 s)
        failing = facts.filter(has_text="source failing")
        failing.wait_for(timeout=20_000)
        text = failing.inner_text()
        assert "overloaded" in text and "fallback 3" in text
        assert watched.problems == []
    finally:
        server.stop()
