"""Every decision the service answers carries its reason code and record, stored with it, and
/metrics counts decisions by code."""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from scaling import Scaler
from scaling.decision import CODES
from service.app import create_app
from service.settings import Settings

POLICY = {"capacity": 50.0, "min_operators": 1, "max_operators": 12}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        yield client


def queue_samples(count: int) -> list[dict[str, float | int]]:
    """A stage at 8 instances whose load rises from 380 to 560 records/s at t = 60: its backlog
    grows until more run."""
    rng = np.random.default_rng(3)
    backlog, samples = 0.0, []
    for t in range(count):
        volume = max(0.0, (380.0 if t < 60 else 560.0) + rng.normal(0.0, 40.0))
        processed = min(backlog + volume, 400.0)
        backlog = max(backlog + volume - processed, 0.0)
        samples.append(
            {"t": float(t), "volume": volume, "backlog": backlog, "running": 8,
             "processed": processed}
        )  # fmt: skip
    return samples


def test_decisions_carry_their_code_and_the_cost_of_one_more_and_one_fewer(
    client: TestClient,
) -> None:
    assert (
        client.put("/v1/streams/orders", json={"policy": POLICY, "operators": 8}).status_code == 201
    )
    samples = queue_samples(120)
    answer = client.post("/v1/streams/orders/samples", json={"samples": samples})
    assert answer.status_code == 200, answer.text
    decisions = answer.json()["decisions"]
    expected = Scaler.from_spec({"policy": POLICY}, operators=8)
    for sample, decision in zip(samples, decisions, strict=True):
        mine = expected.observe(
            sample["volume"], sample["t"], backlog=sample["backlog"],
            running=sample["running"], processed=sample["processed"],
        )  # fmt: skip
        assert (decision["code"], decision["explain"]) == (mine.code, mine.explain)
        assert decision["code"] in CODES
    # The changepoint filter warms up over its first 8 samples: held, and said so.
    assert {d["code"] for d in decisions[:8]} == {"WarmingUp"}
    # Afterwards every decision prices the count it chose against one more and one fewer.
    for decision in decisions[8:]:
        rows = {row["operators"]: row for row in decision["explain"]["candidates"]}
        chosen = decision["operators"]
        assert set(rows) == {chosen - 1, chosen, chosen + 1}, decision
        assert decision["reason"].startswith(f"{chosen}: expected cost {rows[chosen]['total']:.0f}")
    # The rise is answered by scaling up (the backlog grows at 8), within the bound of 12.
    assert any(d["code"] in ("ScaledUp", "LimitedByBound") for d in decisions[60:])
    # Stored as answered: the history gives the same codes and records.
    history = client.get("/v1/streams/orders/history", params={"limit": 1000}).json()
    assert [(d["code"], d["explain"]) for d in history["decisions"]] == [
        (d["code"], d["explain"]) for d in decisions
    ]


def test_metrics_count_decisions_by_code(client: TestClient) -> None:
    client.put("/v1/streams/orders", json={"policy": POLICY, "operators": 8})
    client.put("/v1/streams/plain", json={"policy": POLICY, "operators": 1})
    decisions = client.post(
        "/v1/streams/orders/samples", json={"samples": queue_samples(90)}
    ).json()["decisions"]
    plain = [{"t": float(t), "volume": 120.0} for t in range(20)]
    decisions += client.post("/v1/streams/plain/samples", json={"samples": plain}).json()[
        "decisions"
    ]
    text = client.get("/metrics").text
    counted = {
        code: float(value)
        for code, value in re.findall(r'steadyscale_decisions_total\{code="(\w+)"\} (\S+)', text)
    }
    # Every code has its series, at zero when none was decided: the labels are bounded.
    assert set(counted) == set(CODES)
    assert counted == {code: float(Counter(d["code"] for d in decisions)[code]) for code in CODES}


def test_streams_stored_before_the_model_are_mapped_or_refused_by_name(tmp_path: Path) -> None:
    """A stream whose stored policy has settings from before the cost model keeps deciding
    (mapped, and shown mapped); one that cannot be mapped answers 409 naming the setting, and
    a PUT with ?reset=true replaces it."""
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        for stream in ("old", "bad"):
            assert client.put(f"/v1/streams/{stream}", json={"policy": POLICY}).status_code == 201
    stored = {
        "old": {**POLICY, "risk": 0.01, "quiet": 30.0, "utilisation": 0.8},
        "bad": {**POLICY, "catch_up": None},
    }
    database = sqlite3.connect(tmp_path / "steadyscale.db")
    for stream, policy in stored.items():
        spec, state = database.execute(
            "SELECT spec, state FROM streams JOIN checkpoints ON stream = id WHERE id = ?",
            (stream,),
        ).fetchone()
        spec, state = json.loads(spec), json.loads(state)
        spec["policy"] = state["spec"]["policy"] = policy
        database.execute("UPDATE streams SET spec = ? WHERE id = ?", (json.dumps(spec), stream))
        database.execute(
            "UPDATE checkpoints SET state = ? WHERE stream = ?", (json.dumps(state), stream)
        )
    database.commit()
    database.close()
    sample = {"samples": [{"t": 1.0, "volume": 300.0, "backlog": 10.0}]}
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        assert client.post("/v1/streams/old/samples", json=sample).status_code == 200
        shown = client.get("/v1/streams/old").json()["config"]["policy"]
        assert shown["late_probability"] == 0.01 and shown["capacity"] == 40.0
        for answer in (
            client.post("/v1/streams/bad/samples", json=sample),
            client.get("/v1/streams/bad"),
        ):
            assert answer.status_code == 409, answer.text
            assert answer.json()["errors"][0]["field"] == "stored.policy.catch_up"
        assert client.get("/v1/streams/bad/history").json()["decisions"] == []
        fresh = client.put("/v1/streams/bad", params={"reset": "true"}, json={"policy": POLICY})
        assert fresh.status_code == 200, fresh.text
        assert client.post("/v1/streams/bad/samples", json=sample).status_code == 200


def test_a_stream_stored_with_a_stated_default_late_price_spelled_as_before_is_the_same(
    tmp_path: Path,
) -> None:
    """Before session 23 a stated late_price of 1,000 (the default) was stored left out; now a
    stated one is kept (an unstated one is capped where restarts are long). PUT again with
    its configuration, such a stream is the same stream: 200 "unchanged", its history kept, its
    spec written as now, and it decides at the stated price."""
    stated = {"policy": {**POLICY, "late_price": 1000.0}}
    samples = queue_samples(40)
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        assert client.put("/v1/streams/s", json=stated).status_code == 201
        posted = client.post("/v1/streams/s/samples", json={"samples": samples[:20]})
        assert posted.status_code == 200, posted.text
    database = sqlite3.connect(tmp_path / "steadyscale.db")
    spec, state = database.execute(
        "SELECT spec, state FROM streams JOIN checkpoints ON stream = id WHERE id = 's'"
    ).fetchone()
    spec, state = json.loads(spec), json.loads(state)
    assert spec["policy"]["late_price"] == 1000.0
    del spec["policy"]["late_price"], state["spec"]["policy"]["late_price"]  # as stored before
    database.execute("UPDATE streams SET spec = ? WHERE id = 's'", (json.dumps(spec),))
    database.execute("UPDATE checkpoints SET state = ? WHERE stream = 's'", (json.dumps(state),))
    database.commit()
    database.close()
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        again = client.put("/v1/streams/s", json=stated)
        assert again.status_code == 200, again.text
        assert client.get("/v1/streams/s").json()["config"]["policy"]["late_price"] == 1000.0
        assert len(client.get("/v1/streams/s/history").json()["decisions"]) == 20
        more = client.post("/v1/streams/s/samples", json={"samples": samples[20:]})
        assert more.status_code == 200, more.text
        prices = more.json()["decisions"][-1]["explain"]["prices"]
        assert prices["late_price"] == 1000.0 and prices["late_price_stated"] is True
