"""The committed gRPC modules against KEDA's proto: same proto as KEDA published, same
descriptor as a fresh compile, same text as the generator writes."""

from __future__ import annotations

import hashlib
import importlib.metadata
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2
from grpc_tools import protoc

from service.keda import externalscaler_pb2 as pb
from service.keda import externalscaler_pb2_grpc as pb_grpc
from service.keda.generate import GENERATED, PROTO, ROOT, generate

# Git's blob id of pkg/scalers/externalscaler/externalscaler.proto in kedacore/keda at
# 8b4f083c (``git rev-parse 8b4f083c:pkg/scalers/externalscaler/externalscaler.proto``).
KEDA_BLOB = "31a4b3744a20e3907f0bf5bc44f94f3cd54e1341"


def test_the_proto_is_kedas_unchanged() -> None:
    content = PROTO.read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()
    assert blob == KEDA_BLOB
    assert "Apache License" in PROTO.with_name("LICENSE").read_text()


def test_the_committed_modules_describe_the_proto(tmp_path: Path) -> None:
    descriptors = tmp_path / "externalscaler.pb"
    arguments = ["protoc", f"--proto_path={ROOT}", f"--descriptor_set_out={descriptors}"]
    assert protoc.main([*arguments, str(PROTO.relative_to(ROOT))]) == 0
    fresh = descriptor_pb2.FileDescriptorSet.FromString(descriptors.read_bytes()).file[0]
    for message in fresh.message_type:  # the embedded copy leaves out the default JSON names
        for nested in (message, *message.nested_type):
            for field in nested.field:
                field.ClearField("json_name")
    committed = descriptor_pb2.FileDescriptorProto()
    pb.DESCRIPTOR.CopyToProto(committed)
    assert committed == fresh
    service = pb.DESCRIPTOR.services_by_name["ExternalScaler"]
    assert service.full_name == "externalscaler.ExternalScaler"  # the name KEDA calls
    methods = {method.name for method in service.methods}
    assert methods <= set(vars(pb_grpc.ExternalScalerServicer))


def test_regenerating_gives_the_committed_files(tmp_path: Path) -> None:
    if importlib.metadata.version("grpcio-tools") != pb_grpc.GRPC_GENERATED_VERSION:
        pytest.skip("another grpcio-tools than the committed files' writes other versions")
    written = generate(tmp_path)
    assert [path.name for path in written] == list(GENERATED)
    for path in written:
        assert path.read_text() == PROTO.with_name(path.name).read_text(), path.name
