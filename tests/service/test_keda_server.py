"""KedaServer in this process (a real gRPC server and client): its settings, its port, and
StreamMetricSpec, which KEDA opens beside StreamIsActive for ``external-push`` triggers."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from service.keda import KedaServer, serve_keda
from service.keda import externalscaler_pb2 as pb
from service.keda import externalscaler_pb2_grpc as pb_grpc
from service.models import StreamConfig
from service.settings import Settings
from service.storage import Storage
from service.streams import StreamService

CONFIG = StreamConfig.model_validate({"filter": {"name": "raw"}, "policy": {"capacity": 50.0}})


@pytest.fixture
def streams(tmp_path: Path) -> Iterator[StreamService]:
    storage = Storage(tmp_path / "steadyscale.db")
    yield StreamService(storage, retention=100, max_batch=100)
    storage.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEADYSCALE_GRPC_PORT", "9090")
    monkeypatch.setenv("STEADYSCALE_STALENESS", "30")
    settings = Settings()
    assert (settings.grpc_port, settings.staleness) == (9090, 30.0)
    assert Settings(grpc_port=None).grpc_port is None
    with pytest.raises(ValueError, match="staleness"):
        Settings(staleness=0)


def test_no_port_no_server(streams: StreamService) -> None:
    with serve_keda(Settings(grpc_port=None), streams) as server:
        assert server is None


def test_a_port_in_use_is_refused_with_its_address(streams: StreamService) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = KedaServer(streams, host="127.0.0.1", port=port, staleness=60.0)
        with pytest.raises(RuntimeError, match=f"127.0.0.1:{port}"):
            server.start()


def test_a_second_server_on_the_same_port_is_refused(streams: StreamService) -> None:
    settings = Settings(host="127.0.0.1", grpc_port=_free_port(), staleness=60.0)
    with serve_keda(settings, streams), pytest.raises(RuntimeError, match="cannot listen"):
        assert settings.grpc_port is not None
        KedaServer(streams, host="127.0.0.1", port=settings.grpc_port, staleness=60.0).start()


def test_stream_metric_spec_sends_the_spec_and_ends_when_the_stream_goes(
    streams: StreamService,
) -> None:
    streams.put("orders", CONFIG)
    port = _free_port()
    settings = Settings(host="127.0.0.1", grpc_port=port, staleness=60.0)
    ref = pb.ScaledObjectRef(name="a", namespace="b", scalerMetadata={"stream": "orders"})
    with (
        serve_keda(settings, streams),
        grpc.insecure_channel(f"127.0.0.1:{port}") as channel,
    ):
        keda = pb_grpc.ExternalScalerStub(channel)
        specs = keda.StreamMetricSpec(ref, timeout=20.0)
        assert next(specs) == keda.GetMetricSpec(ref, timeout=5.0)
        streams.delete("orders")
        with pytest.raises(grpc.RpcError) as ended:
            next(specs)
        assert isinstance(ended.value, grpc.Call)
        assert ended.value.code() == grpc.StatusCode.NOT_FOUND


def test_calls_and_messages_are_bounded_and_ids_cut_short_in_messages(
    streams: StreamService,
) -> None:
    """Issue 32, item 9: open calls beyond grpc_max_calls are refused at once, a message
    beyond grpc_max_message_bytes is refused, and a NOT_FOUND quotes a long id cut short."""
    streams.put("orders", CONFIG)
    port = _free_port()
    settings = Settings(
        host="127.0.0.1", grpc_port=port, staleness=60.0, grpc_max_calls=2,
        grpc_max_message_bytes=4096,
    )  # fmt: skip
    ref = pb.ScaledObjectRef(name="a", namespace="b", scalerMetadata={"stream": "orders"})
    with (
        serve_keda(settings, streams),
        grpc.insecure_channel(f"127.0.0.1:{port}") as channel,
    ):
        keda = pb_grpc.ExternalScalerStub(channel)
        open_calls = [keda.StreamIsActive(ref, timeout=20.0) for _ in range(2)]
        for call in open_calls:
            next(call)  # each has sent its first answer: both are in progress
        with pytest.raises(grpc.RpcError) as refused:
            keda.IsActive(ref, timeout=5.0)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[attr-defined]
        for call in open_calls:
            call.cancel()
        time.sleep(0.2)
        long_id = pb.ScaledObjectRef(name="a", namespace="b", scalerMetadata={"stream": "x" * 3000})
        with pytest.raises(grpc.RpcError) as missing:
            keda.IsActive(long_id, timeout=5.0)
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND  # type: ignore[attr-defined]
        assert len(missing.value.details()) < 300  # type: ignore[attr-defined]
        huge = pb.ScaledObjectRef(name="a", namespace="b", scalerMetadata={"stream": "x" * 5000})
        with pytest.raises(grpc.RpcError) as too_large:
            keda.IsActive(huge, timeout=5.0)
        assert too_large.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[attr-defined]
        assert keda.IsActive(ref, timeout=5.0).result in (True, False)
