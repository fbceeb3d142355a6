"""A Prometheus exporter with known, changing values, for the real-Prometheus test.

``python -m tests.service.pull.exporter PORT`` serves ``/metrics`` on 127.0.0.1:PORT; each
scrape computes its values from the time it is scraped at (``values_at``), so that the test
knows every value Prometheus can have stored.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

from prometheus_client import start_http_server
from prometheus_client.core import REGISTRY, GaugeMetricFamily
from prometheus_client.registry import Collector


def values_at(t: float) -> dict[str, float]:
    """The exporter's values at unix time ``t``: a volume that steps every 2 s between 100 and
    280 tuples/s, and a running count that steps every 5 s between 2 and 4."""
    return {
        "pull_test_volume": 100.0 + 20.0 * ((int(t) // 2) % 10),
        "pull_test_running": 2.0 + (int(t) // 5) % 3,
    }


class Changing(Collector):
    def collect(self) -> Iterator[GaugeMetricFamily]:
        for name, value in values_at(time.time()).items():
            yield GaugeMetricFamily(name, f"{name}, known to the test", value=value)


def main(port: int) -> None:
    REGISTRY.register(Changing())
    start_http_server(port, addr="127.0.0.1")
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main(int(sys.argv[1]))
