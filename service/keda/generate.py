"""Regenerate the committed gRPC modules from ``externalscaler.proto``.

``python -m service.keda.generate`` (from the repository root, with the ``test`` extra
installed: grpcio-tools and mypy-protobuf) writes ``externalscaler_pb2.py``,
``externalscaler_pb2_grpc.py`` and their typed stubs (``.pyi``) beside the proto. A test runs it
into a temporary directory and compares, so the committed files cannot drift from the proto or
from the generator.

The proto is compiled under the name ``service/keda/externalscaler.proto`` (include path: the
repository root) so that the generated modules import each other as ``service.keda....``; its
``package externalscaler`` is untouched, so the service is ``externalscaler.ExternalScaler``,
the name KEDA calls.
"""

from __future__ import annotations

import sys
from pathlib import Path

PROTO = Path(__file__).with_name("externalscaler.proto")
ROOT = PROTO.parents[2]
GENERATED = (
    "externalscaler_pb2.py",
    "externalscaler_pb2.pyi",
    "externalscaler_pb2_grpc.py",
    "externalscaler_pb2_grpc.pyi",
)


def generate(out: Path) -> list[Path]:
    """Compile the proto into ``out`` (``out/service/keda/...``); returns the files written.

    Raises ``RuntimeError`` with protoc's exit code if it fails.
    """
    import os
    import shutil

    from grpc_tools import protoc

    # mypy-protobuf's plugins sit beside this Python (a virtual environment's bin), which need
    # not be on PATH.
    search = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    plugins = {
        name: shutil.which(name, path=search)
        for name in ("protoc-gen-mypy", "protoc-gen-mypy_grpc")
    }
    missing = [name for name, path in plugins.items() if path is None]
    if missing:
        raise RuntimeError(f"{', '.join(missing)} not found: install mypy-protobuf")
    out.mkdir(parents=True, exist_ok=True)
    include = str(Path(protoc.__file__).with_name("_proto"))
    arguments = [
        "grpc_tools.protoc",
        f"--proto_path={ROOT}",
        f"--proto_path={include}",
        f"--plugin=protoc-gen-mypy={plugins['protoc-gen-mypy']}",
        f"--plugin=protoc-gen-mypy_grpc={plugins['protoc-gen-mypy_grpc']}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        f"--mypy_out={out}",
        f"--mypy_grpc_out={out}",
        str(PROTO.relative_to(ROOT)),
    ]
    code = protoc.main(arguments)
    if code != 0:
        raise RuntimeError(f"protoc failed with exit code {code}")
    return [out / "service" / "keda" / name for name in GENERATED]


def main() -> int:
    """Generate in place (the repository root is the output directory)."""
    for path in generate(ROOT):
        sys.stderr.write(f"wrote {path.relative_to(ROOT)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
