"""A stream created without a filter gets the default Scaler (docs/default.md), as embedders do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from scaling import Scaler
from service.app import create_app
from service.settings import Settings

POLICY = {"capacity": 50.0, "min_operators": 1, "max_operators": 100}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        yield client


def test_a_put_without_filter_gets_the_default_and_decides_like_it(client: TestClient) -> None:
    assert client.put(
        "/v1/streams/orders", json={"policy": POLICY, "operators": 7}
    ).status_code in (
        200,
        201,
    )
    rng = np.random.default_rng(4)
    volumes = np.clip(350.0 + rng.normal(0.0, 30.0, 300), 0.0, None).tolist()
    volumes[250] = 1050.0  # a spike the default ignores
    samples = [{"t": float(t), "volume": v} for t, v in enumerate(volumes)]
    answer = client.post("/v1/streams/orders/samples", json={"samples": samples})
    assert answer.status_code == 200, answer.text
    expected = Scaler.from_spec({"policy": POLICY}, operators=7)
    assert [d["operators"] for d in answer.json()["decisions"]] == [
        expected.observe(s["volume"], s["t"]).operators for s in samples
    ]
    stored = client.get("/v1/streams/orders").json()
    assert "changepoint" in str(stored) and "confidence" in str(stored)


def test_guards_given_without_a_filter_replace_the_default_guard(client: TestClient) -> None:
    body = {"policy": POLICY, "guards": []}
    assert client.put("/v1/streams/plain", json=body).status_code in (200, 201)
    stored = str(client.get("/v1/streams/plain").json())
    assert "changepoint" in stored and "confidence" not in stored
