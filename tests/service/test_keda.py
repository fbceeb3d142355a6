"""The KEDA external scaler as KEDA meets it: a real `steadyscale serve --grpc-port` process,
samples POSTed over HTTP, and a gRPC client generated from KEDA's proto calling in KEDA's
order (``pkg/scalers/external_scaler.go``: GetMetricSpec when the HPA is built, then on each
poll GetMetrics followed by IsActive; StreamIsActive for ``external-push`` triggers)."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import numpy as np
import pytest

from service.keda import externalscaler_pb2 as pb
from service.keda import externalscaler_pb2_grpc as pb_grpc
from tests.service.test_server import Server

# Staleness short enough to wait out in a test; batches below come faster than that.
STALENESS = 5.0

CONFIG = {
    "filter": {"name": "ewma", "alpha": 0.3},
    "policy": {"capacity": 50.0, "min_operators": 1, "max_operators": 20},
    "guards": [{"name": "hysteresis", "band": 0.05}],
    "operators": 4,
}


class Serve(Server):
    """`steadyscale serve --grpc-port G` in its own process, its log kept in ``log``."""

    def __init__(self, data_dir: Path) -> None:
        self.log = data_dir.parent / "serve.log"
        # The ports are free when probed, not always when the server binds them: the Spark
        # tests' JVMs beside these take ephemeral ports too (CI, session 21: "cannot listen on
        # 127.0.0.1:33701 (--grpc-port ...): Address already in use"). Taken, try new ones.
        for attempt in range(3):
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                grpc_port = int(probe.getsockname()[1])
            self.target = f"127.0.0.1:{grpc_port}"
            try:
                super().__init__(
                    data_dir,
                    env={"STEADYSCALE_STALENESS": str(STALENESS)},
                    options=["--grpc-port", str(grpc_port), "--log-level", "info"],
                    log=self.log,
                )
                return
            except RuntimeError:
                if attempt == 2 or "Address already in use" not in self.log.read_text():
                    raise

    def stopped_log(self) -> str:
        """SIGTERM, as Kubernetes sends; the server's log once it has exited."""
        self.stop()
        return self.log.read_text()


def assert_clean_exit(log: str) -> None:
    # uvicorn exits by re-raising the SIGTERM it handled, so the exit code says nothing; the
    # lifespan (which stops the gRPC server) finishing does.
    assert "Application shutdown complete." in log and "Traceback" not in log, log


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    running = Serve(tmp_path_factory.mktemp("keda") / "data")
    yield running
    assert_clean_exit(running.stopped_log())


@pytest.fixture
def http(serve: Serve) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=serve.url, timeout=10.0) as client:
        yield client


@pytest.fixture
def keda(serve: Serve) -> Iterator[pb_grpc.ExternalScalerStub]:
    with grpc.insecure_channel(serve.target) as channel:
        grpc.channel_ready_future(channel).result(timeout=10.0)
        yield pb_grpc.ExternalScalerStub(channel)


def ref(stream: str) -> pb.ScaledObjectRef:
    """What KEDA sends: the ScaledObject's name and namespace, the trigger's metadata."""
    metadata = {"scalerAddress": "steadyscale:9090", "stream": stream}
    return pb.ScaledObjectRef(name="orders-consumer", namespace="jobs", scalerMetadata=metadata)


def create(http: httpx.Client, stream: str, **overrides: object) -> None:
    answer = http.put(f"/v1/streams/{stream}", json={**CONFIG, **overrides})
    assert answer.status_code == 201, answer.text


def post(http: httpx.Client, stream: str, samples: list[dict[str, float]]) -> int:
    """POST a batch; the operator count the service decided last."""
    answer = http.post(f"/v1/streams/{stream}/samples", json={"samples": samples})
    assert answer.status_code == 200, answer.text
    return int(answer.json()["operators"])


def poll(keda: pb_grpc.ExternalScalerStub, stream: str, metric: str) -> tuple[float, bool]:
    """One KEDA poll: GetMetrics then IsActive (GetMetricsAndActivity)."""
    request = pb.GetMetricsRequest(scaledObjectRef=ref(stream), metricName=metric)
    values = keda.GetMetrics(request, timeout=5.0).metricValues
    assert len(values) == 1 and values[0].metricName == metric
    assert values[0].metricValue == values[0].metricValueFloat
    return values[0].metricValueFloat, keda.IsActive(ref(stream), timeout=5.0).result


def code(call: object) -> grpc.StatusCode:
    """The status code a failed call ended with."""
    with pytest.raises(grpc.RpcError) as raised:
        if callable(call):
            call()
    error = raised.value
    assert isinstance(error, grpc.Call)
    return error.code()


def test_the_metric_is_the_decided_count_after_every_batch(
    http: httpx.Client, keda: pb_grpc.ExternalScalerStub
) -> None:
    create(http, "orders")
    specs = keda.GetMetricSpec(ref("orders"), timeout=5.0).metricSpecs
    assert len(specs) == 1
    assert (specs[0].targetSize, specs[0].targetSizeFloat) == (1, 1.0)
    metric = specs[0].metricName
    # Before the first sample: the configured count, not an error.
    assert poll(keda, "orders", metric) == (4.0, True)
    rng = np.random.default_rng(16)
    levels = np.repeat([150.0, 480.0, 1200.0, 260.0, 60.0, 700.0], 40)
    volumes = np.clip(levels + rng.normal(0.0, 40.0, levels.size), 0.0, None)
    seen = []
    for start in range(0, volumes.size, 8):
        batch = [{"t": float(i), "volume": float(volumes[i])} for i in range(start, start + 8)]
        decided = post(http, "orders", batch)
        assert poll(keda, "orders", metric) == (float(decided), True)
        assert http.get("/v1/streams/orders/metric").json()["operators"] == decided
        seen.append(decided)
    # The workload moved the count both ways, up to the policy's bound.
    assert len(set(seen)) >= 4 and max(seen) == 20
    assert any(b < a for a, b in zip(seen, seen[1:], strict=False))


def test_unknown_streams_and_missing_metadata_get_their_codes(
    keda: pb_grpc.ExternalScalerStub,
) -> None:
    unknown = ref("no-such-stream")
    request = pb.GetMetricsRequest(scaledObjectRef=unknown, metricName="steadyscale-x")
    assert code(lambda: keda.GetMetricSpec(unknown, timeout=5.0)) == grpc.StatusCode.NOT_FOUND
    assert code(lambda: keda.GetMetrics(request, timeout=5.0)) == grpc.StatusCode.NOT_FOUND
    assert code(lambda: keda.IsActive(unknown, timeout=5.0)) == grpc.StatusCode.NOT_FOUND
    stream = keda.StreamIsActive(unknown, timeout=5.0)
    assert code(lambda: next(stream)) == grpc.StatusCode.NOT_FOUND
    bare = pb.ScaledObjectRef(name="x", namespace="y", scalerMetadata={"scalerAddress": "z"})
    assert code(lambda: keda.IsActive(bare, timeout=5.0)) == grpc.StatusCode.INVALID_ARGUMENT


def test_a_stale_stream_is_unavailable_until_its_next_sample(
    http: httpx.Client, keda: pb_grpc.ExternalScalerStub
) -> None:
    create(http, "stale")
    metric = keda.GetMetricSpec(ref("stale"), timeout=5.0).metricSpecs[0].metricName
    decided = post(http, "stale", [{"t": 0.0, "volume": 310.0}])
    assert poll(keda, "stale", metric) == (float(decided), True)
    time.sleep(STALENESS + 1.5)
    request = pb.GetMetricsRequest(scaledObjectRef=ref("stale"), metricName=metric)
    assert code(lambda: keda.GetMetrics(request, timeout=5.0)) == grpc.StatusCode.UNAVAILABLE
    assert code(lambda: keda.IsActive(ref("stale"), timeout=5.0)) == grpc.StatusCode.UNAVAILABLE
    # The spec does not go stale: KEDA can still build the HPA, and its fallback applies.
    assert keda.GetMetricSpec(ref("stale"), timeout=5.0).metricSpecs[0].metricName == metric
    decided = post(http, "stale", [{"t": 1.0, "volume": 320.0}])
    assert poll(keda, "stale", metric) == (float(decided), True)


def test_stream_is_active_pushes_each_change_of_activity(
    http: httpx.Client, keda: pb_grpc.ExternalScalerStub
) -> None:
    create(http, "idle", filter={"name": "raw"}, policy={"capacity": 50.0, "min_operators": 0})
    post(http, "idle", [{"t": 0.0, "volume": 120.0}])
    pushes = keda.StreamIsActive(ref("idle"), timeout=30.0)
    assert next(pushes).result is True
    post(http, "idle", [{"t": 1.0, "volume": 0.0}, {"t": 2.0, "volume": 0.0}])
    assert next(pushes).result is False
    post(http, "idle", [{"t": 3.0, "volume": 0.0}])  # still inactive: nothing pushed
    post(http, "idle", [{"t": 4.0, "volume": 90.0}])
    assert next(pushes).result is True
    pushes.cancel()


_CLIENT = """
import sys, grpc
from service.keda import externalscaler_pb2 as pb, externalscaler_pb2_grpc as pb_grpc
channel = grpc.insecure_channel(sys.argv[1])
ref = pb.ScaledObjectRef(name="a", namespace="b", scalerMetadata={"stream": sys.argv[2]})
for answer in pb_grpc.ExternalScalerStub(channel).StreamIsActive(ref):
    print(answer.result, flush=True)
"""


def test_the_server_survives_clients_that_leave_mid_stream(
    http: httpx.Client, keda: pb_grpc.ExternalScalerStub, serve: Serve
) -> None:
    create(http, "leave")
    post(http, "leave", [{"t": 0.0, "volume": 200.0}])
    # A client that cancels its call (RST_STREAM) ...
    pushes = keda.StreamIsActive(ref("leave"), timeout=30.0)
    assert next(pushes).result is True
    pushes.cancel()
    # ... and one killed outright, its TCP connection cut while its stream is open.
    client = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_CLIENT), serve.target, "leave"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert client.stdout is not None and client.stdout.readline().strip() == "True"
    client.kill()
    client.wait(timeout=10)
    for t, volume in ((1.0, 400.0), (2.0, 30.0)):  # the server keeps deciding and answering
        decided = post(http, "leave", [{"t": t, "volume": volume}])
        request = pb.GetMetricsRequest(scaledObjectRef=ref("leave"), metricName="m")
        assert keda.GetMetrics(request, timeout=5.0).metricValues[0].metricValue == decided
    fresh = keda.StreamIsActive(ref("leave"), timeout=30.0)
    assert next(fresh).result is True
    fresh.cancel()
    assert serve.process.poll() is None


def test_sigterm_with_a_stream_open_ends_it_and_exits(tmp_path: Path) -> None:
    server = Serve(tmp_path / "data")
    try:
        with httpx.Client(base_url=server.url, timeout=10.0) as http:
            create(http, "drain")
            post(http, "drain", [{"t": 0.0, "volume": 80.0}])
        with grpc.insecure_channel(server.target) as channel:
            pushes = pb_grpc.ExternalScalerStub(channel).StreamIsActive(ref("drain"), timeout=30)
            assert next(pushes).result is True
            started = time.monotonic()
            log = server.stopped_log()
            assert time.monotonic() - started < 10.0
            assert code(lambda: next(pushes)) in {
                grpc.StatusCode.UNAVAILABLE,
                grpc.StatusCode.CANCELLED,
            }
        assert_clean_exit(log)
    finally:
        server.process.kill()
