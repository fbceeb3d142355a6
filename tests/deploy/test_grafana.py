"""deploy/grafana/steadyscale.json: its queries read only series a live `steadyscale serve`
exports, and Prometheus' own checker, promtool, accepts each of them as PromQL.

promtool comes with Debian's prometheus package (``make test`` installs it when it can;
``STEADYSCALE_PROMTOOL`` names another). Without it the promtool tests are skipped as
"promtool NOT TESTED" with the reason; the metric names are checked all the same.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.not_tested import not_tested
from tests.service.test_server import Server

DASHBOARD = Path(__file__).parents[2] / "deploy" / "grafana" / "steadyscale.json"
# What Grafana puts in place of each variable the queries use, as it would: a query with any
# other variable fails the checks below.
VARIABLES = {
    "$__rate_interval": "1m",
    "$__interval": "15s",
    "$stream": "orders|payments",
}
METRIC = re.compile(r"\bsteadyscale_[a-z0-9_]+\b")


def queries() -> list[tuple[str, str]]:
    """Every query of the dashboard: (where it is, the query as written)."""
    dashboard = json.loads(DASHBOARD.read_text())
    found: list[tuple[str, str]] = []

    def panels(items: list[dict[str, Any]]) -> None:
        for panel in items:
            for target in panel.get("targets", []):
                found.append((f"panel {panel['title']!r} {target['refId']}", target["expr"]))
            panels(panel.get("panels", []))

    panels(dashboard["panels"])
    for annotation in dashboard["annotations"]["list"]:
        if "expr" in annotation:
            found.append((f"annotation {annotation['name']!r}", annotation["expr"]))
    return found


def promql(query: str) -> str:
    """The query with Grafana's variables replaced, as Prometheus receives it."""
    for variable in sorted(VARIABLES, key=len, reverse=True):
        query = query.replace(variable, VARIABLES[variable])
    assert "$" not in query, f"a variable the test does not know: {query}"
    return query


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A real service with a stream that scaled up and down and reported its running count
    and backlog: every series it can export."""
    server = Server(tmp_path_factory.mktemp("grafana") / "data")
    try:
        with httpx.Client(base_url=server.url, timeout=30.0) as client:
            config = {"filter": {"name": "raw"}, "policy": {"capacity": 50.0}, "operators": 1}
            assert client.put("/v1/streams/orders", json=config).status_code == 201
            samples: list[dict[str, float]] = [
                {"t": float(t), "volume": 300.0 if 10 <= t < 20 else 40.0} for t in range(30)
            ]
            samples.append({"t": 30.0, "volume": 40.0, "running": 1, "backlog": 5.0})
            answer = client.post("/v1/streams/orders/samples", json={"samples": samples})
            actions = {decision["action"] for decision in answer.json()["decisions"]}
            assert {"up", "down"} <= actions
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def live_metrics(live: Server) -> str:
    return httpx.get(f"{live.url}/metrics", timeout=30.0).text


def test_the_dashboard_reads_only_series_the_service_exports(live_metrics: str) -> None:
    exported = {
        sample.name
        for family in text_string_to_metric_families(live_metrics)
        for sample in family.samples
    }
    dashboard = json.loads(DASHBOARD.read_text())
    variables = [variable.get("definition", "") for variable in dashboard["templating"]["list"]]
    used = {name for _, query in queries() for name in METRIC.findall(query)}
    used |= {name for definition in variables for name in METRIC.findall(definition)}
    assert len(used) >= 8
    assert used <= exported, f"not exported: {sorted(used - exported)}"


def promtool(program: str = "promtool") -> str:
    """The path of promtool (or of ``program`` beside it: Debian's prometheus package has
    both); skips, saying why, where there is none."""
    given = os.environ.get("STEADYSCALE_PROMTOOL")
    found = shutil.which(given or "promtool")
    if found is not None and program != "promtool":
        beside = Path(found).with_name(program)
        found = str(beside) if beside.exists() else shutil.which(program)
    if found is None:
        why = (
            f"no {program} ({given or 'on PATH'}): install Debian's prometheus package "
            "(apt-get install prometheus, which make test does as root), or set "
            "STEADYSCALE_PROMTOOL"
        )
        not_tested(program, why)
    return found


def check_rules(tool: str, expressions: list[str], path: Path) -> subprocess.CompletedProcess[str]:
    """promtool check rules on the expressions, each as a recording rule."""
    rules = [
        {"record": f"steadyscale:grafana_query:{number}", "expr": expression}
        for number, expression in enumerate(expressions)
    ]
    path.write_text(yaml.safe_dump({"groups": [{"name": "grafana", "rules": rules}]}))
    return subprocess.run(
        [tool, "check", "rules", str(path)], capture_output=True, text=True, check=False
    )


def test_promtool_accepts_every_query(tmp_path: Path) -> None:
    tool = promtool()
    expressions = [promql(query) for _, query in queries()]
    checked = check_rules(tool, expressions, tmp_path / "rules.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(expressions)} rules found" in checked.stdout
    # The check can fail: a query with a paren short is refused.
    broken = check_rules(tool, [expressions[-1][:-1]], tmp_path / "broken.yaml")
    assert broken.returncode != 0


def test_promtool_has_nothing_to_say_about_the_metrics(live_metrics: str) -> None:
    tool = promtool()
    linted = subprocess.run(
        [tool, "check", "metrics"], input=live_metrics, capture_output=True, text=True, check=False
    )
    assert linted.returncode == 0 and linted.stdout + linted.stderr == "", linted.stdout


def test_every_panel_draws_series_from_a_real_prometheus(live: Server, tmp_path: Path) -> None:
    """Prometheus itself scrapes the live service every second; each panel's query, as Grafana
    would send it, answers at least one series."""
    executable = promtool("prometheus")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    target = live.url.removeprefix("http://")
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [{"job_name": "steadyscale", "static_configs": [{"targets": [target]}]}],
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    command = [executable, f"--config.file={tmp_path / 'prometheus.yml'}",
               f"--storage.tsdb.path={tmp_path / 'data'}",
               f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"]  # fmt: skip
    with (tmp_path / "prometheus.log").open("w") as log:
        prometheus = subprocess.Popen(command, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}/api/v1/query"
    try:

        def series(query: str) -> list[dict[str, Any]]:
            answer = httpx.get(url, params={"query": query}, timeout=10.0).json()
            assert answer["status"] == "success", (query, answer)
            found: list[dict[str, Any]] = answer["data"]["result"]
            return found

        # Until Prometheus has scraped the service a few times, with samples between scrapes.
        deadline = time.monotonic() + 60.0
        t = 31.0
        while True:
            httpx.post(f"{live.url}/v1/streams/orders/samples",
                       json={"samples": [{"t": t, "volume": 40.0 + t}]}, timeout=10.0)  # fmt: skip
            t += 1.0
            try:
                # Prometheus answers 503 until its storage is up: ask only once it is ready.
                ready = httpx.get(f"http://127.0.0.1:{port}/-/ready", timeout=10.0)
                up = 'count_over_time(up{job="steadyscale"}[1m])'
                scrapes = series(up) if ready.status_code == 200 else []
            except httpx.TransportError:
                scrapes = []
            if scrapes and float(scrapes[0]["value"][1]) >= 4:
                break
            assert prometheus.poll() is None, (tmp_path / "prometheus.log").read_text()
            assert time.monotonic() < deadline, "Prometheus scraped the service too few times"
            time.sleep(0.5)
        # Annotations mark changes and may rightly find none in their interval.
        for where, query in queries():
            if where.startswith("panel"):
                assert series(promql(query)), f"{where}: no series for {promql(query)}"
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=10)
