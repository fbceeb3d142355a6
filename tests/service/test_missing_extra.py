"""The service installed without the ``[filters]`` extra (its image: issue 35), simulated here by
blocking filterpy and scipy in this process: a stream that asks for a filter or a method
needing them is refused with a 422 naming the field, the value and the extra, at PUT and at
what-if, and nothing changes; the default and every other filter work."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from filters import available_filters, installed_filters
from service.app import create_app
from service.pull.health import Health
from service.pull.runner import Pull, get_pull
from service.settings import Settings
from tests.service.pull.fake import FakePrometheus

STREAM = "/v1/streams/orders"
POLICY = {"capacity": 50.0}
EKF = {"filter": {"name": "ekf"}, "policy": POLICY}
MM = {"filter": {"name": "tvd", "lam": 10.0, "method": "mm", "window": 20}, "policy": POLICY}
SAMPLES = {"samples": [{"t": float(t), "volume": 300.0 + t % 3} for t in range(5)]}


def block(monkeypatch: pytest.MonkeyPatch, *packages: str) -> None:
    """Make every import of ``packages`` (and their modules) fail as if not installed."""
    for package in packages:
        loaded = [name for name in sys.modules if name.startswith(f"{package}.")]
        for name in [package, *loaded]:
            monkeypatch.setitem(sys.modules, name, None)


@pytest.fixture
def lean(monkeypatch: pytest.MonkeyPatch) -> None:
    block(monkeypatch, "filterpy", "scipy")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(data_dir=tmp_path)), raise_server_exceptions=False) as c:
        yield c


def refusal(response: Any, field: str, value: str, package: str) -> dict[str, Any]:
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert (error["field"], error["value"]) == (field, value)
    assert f"needs {package}" in error["allowed"]
    assert "pip install 'steadyscale[filters]'" in error["allowed"]
    return dict(error)


@pytest.mark.usefixtures("lean")
def test_ekf_without_filterpy_is_422_naming_filter_name_and_nothing_is_created(
    client: TestClient,
) -> None:
    error = refusal(client.put(STREAM, json=EKF), "filter.name", "ekf", "filterpy")
    # What works here instead, named: the filters whose packages this service has.
    assert "'changepoint'" in error["allowed"] and "'ekf'," not in error["allowed"]
    assert client.get(STREAM).status_code == 404
    assert client.get("/v1/streams").json()["streams"] == []


@pytest.mark.usefixtures("lean")
def test_tvd_mm_without_scipy_is_422_naming_filter_method(client: TestClient) -> None:
    error = refusal(client.put(STREAM, json=MM), "filter.method", "mm", "scipy")
    assert "'exact'" in error["allowed"]
    assert client.get(STREAM).status_code == 404


@pytest.mark.usefixtures("lean")
def test_a_replacement_or_a_what_if_needing_the_extra_changes_nothing(client: TestClient) -> None:
    assert client.put(STREAM, json={"policy": POLICY}).status_code == 201
    assert client.post(f"{STREAM}/samples", json=SAMPLES).status_code == 200
    before = client.get(STREAM).json(), client.get(f"{STREAM}/history").json()
    refusal(
        client.put(STREAM, params={"reset": "true"}, json=EKF), "filter.name", "ekf", "filterpy"
    )
    refusal(client.post(f"{STREAM}/what-if", json=EKF), "filter.name", "ekf", "filterpy")
    refusal(client.post(f"{STREAM}/what-if", json=MM), "filter.method", "mm", "scipy")
    assert (client.get(STREAM).json(), client.get(f"{STREAM}/history").json()) == before


@pytest.mark.usefixtures("lean")
@pytest.mark.parametrize("name", [None, *sorted(set(available_filters()) - {"ekf"})])
def test_the_default_and_every_other_filter_work_without_the_extra(
    client: TestClient, name: str | None
) -> None:
    config = {"policy": POLICY} if name is None else {"filter": {"name": name}, "policy": POLICY}
    assert client.put(STREAM, json=config).status_code == 201
    answer = client.post(f"{STREAM}/samples", json=SAMPLES)
    assert answer.status_code == 200, answer.text
    assert client.post(f"{STREAM}/what-if", json=config).status_code == 200


def test_installed_filters_leaves_out_what_needs_a_missing_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert installed_filters() == available_filters()
    block(monkeypatch, "filterpy")
    assert installed_filters() == sorted(set(available_filters()) - {"ekf"})


def test_a_stored_stream_whose_filter_lost_its_package_is_409_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database written by a service with ``[filters]``, served by one without."""
    settings = Settings(data_dir=tmp_path)
    with TestClient(create_app(settings)) as client:
        assert client.put(STREAM, json=EKF).status_code == 201
        assert client.post(f"{STREAM}/samples", json=SAMPLES).status_code == 200
        before = client.get(f"{STREAM}/history").json()
    block(monkeypatch, "filterpy")
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        refused = client.post(f"{STREAM}/samples", json=SAMPLES)
        assert refused.status_code == 409, refused.text
        [error] = refused.json()["errors"]
        assert (error["field"], error["value"]) == ("stored.filter.name", "ekf")
        assert "steadyscale[filters]" in refused.json()["detail"]
        assert "reset=true" in refused.json()["detail"]
        assert client.get(f"{STREAM}/history").json() == before


@pytest.mark.usefixtures("lean")
def test_a_pulled_stream_needing_the_extra_is_refused_the_same_way(tmp_path: Path) -> None:
    """Pull mode configures its stream through the same PUT: refused before it is polled."""
    settings = Settings(data_dir=tmp_path, prometheus_url="http://prometheus:9090")
    prometheus = FakePrometheus({"sum(rate(x[1m]))": lambda t: 351.0})
    app = create_app(settings)
    pull = Pull(settings, prometheus.client(), Health())
    app.dependency_overrides[get_pull] = lambda: pull
    source = {"prometheus": {"volume": "sum(rate(x[1m]))", "interval": 30}}
    with TestClient(app, raise_server_exceptions=False) as client:
        refusal(
            client.put(STREAM, json={**EKF, "source": source}), "filter.name", "ekf", "filterpy"
        )
        assert client.get(STREAM).status_code == 404
        assert client.put(STREAM, json={"policy": POLICY, "source": source}).status_code == 201
