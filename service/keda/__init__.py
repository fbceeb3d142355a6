"""KEDA's external scaler protocol, served over the same streams as the HTTP API.

``steadyscale serve --grpc-port N`` (or ``STEADYSCALE_GRPC_PORT=N``) starts it beside the HTTP
API; a ScaledObject trigger of type ``external`` or ``external-push`` with ``scalerAddress``
pointing at it and the metadata key ``stream`` then scales its target to exactly the operator
count the stream decided (``scaler.py`` says how, ``deploy/`` has the manifests).

``externalscaler.proto`` is KEDA's, as published in kedacore/keda
(``pkg/scalers/externalscaler/externalscaler.proto``, last changed in commit 82ac5847, read
at 8b4f083c), unchanged, under the Apache License 2.0 whose text is ``LICENSE`` beside it.

The modules generated from it (``externalscaler_pb2*``, with typed ``.pyi`` stubs from
mypy-protobuf) are committed rather than generated at build time:

- setuptools has no code-generation step short of a custom build hook, and an editable
  install (how this project is developed) would not run one;
- the runtime then needs grpcio and protobuf only, no compiler;
- the typed stubs let mypy check the servicer against KEDA's contract, with nothing to
  generate before mypy runs;
- the cost, bounds that follow the generator (the modules refuse to import with an older
  grpcio or protobuf than generated them), is stated in ``pyproject.toml``.

``python -m service.keda.generate`` regenerates them; a test checks that the committed
modules describe exactly the proto beside them.
"""

from __future__ import annotations

from service.keda.scaler import ExternalScaler, Reading, StreamWatch, metric_name
from service.keda.server import KedaServer, serve_keda

__all__ = ["ExternalScaler", "KedaServer", "Reading", "StreamWatch", "metric_name", "serve_keda"]
