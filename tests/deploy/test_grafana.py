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
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.service.test_server import Server

DASHBOARD = Path(__file__).parents[2] / "deploy" / "grafana" / "steadyscale.json"
# What Grafana puts in place of each variable the queries use, as it would: a query with any
# other variable fails the checks below.
VARIABLES = {
    "$__rate_interval": "1m",
    "$__interval": "15s",
    "$stream": "orders|payments",
    "$capacity": "50",
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
def live_metrics(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """/metrics of a real service with a stream that scaled up and down and reported its
    running count and backlog: every series it can export."""
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
            yield client.get("/metrics").text
    finally:
        server.stop()


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


def promtool() -> str:
    """promtool's path; skips, saying why, where there is none."""
    given = os.environ.get("STEADYSCALE_PROMTOOL")
    found = shutil.which(given or "promtool")
    if found is None:
        why = (
            f"no promtool ({given or 'on PATH'}): install Debian's prometheus package "
            "(apt-get install prometheus, which make test does as root), or set "
            "STEADYSCALE_PROMTOOL"
        )
        warnings.warn(f"promtool NOT TESTED: {why}", stacklevel=2)
        pytest.skip(f"promtool NOT TESTED: {why}")
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
