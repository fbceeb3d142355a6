"""Request and response bodies of the HTTP API, and the error body every 4xx uses.

What a client sends (a stream's configuration, its samples, what a stream id may be) is in
``service.request_bodies``; what the service answers (decisions, batches, streams, pages of
them, and ``Problem`` with its ``FieldError``s) in ``service.response_bodies``. Everyone imports
them from here.
"""

from __future__ import annotations

from service.request_bodies import (
    STREAM_ID_ALLOWED,
    STREAM_ID_PATTERN,
    ComponentSpec,
    FilterSpec,
    GuardSpec,
    PolicySpec,
    Sample,
    SampleBatch,
    StreamConfig,
)
from service.response_bodies import (
    MAX_ERRORS,
    BatchOut,
    DecisionOut,
    FieldError,
    HistoryOut,
    MetricOut,
    Problem,
    SampleRef,
    Status,
    StreamList,
    StreamOut,
)

__all__ = [
    "MAX_ERRORS",
    "STREAM_ID_ALLOWED",
    "STREAM_ID_PATTERN",
    "BatchOut",
    "ComponentSpec",
    "DecisionOut",
    "FieldError",
    "FilterSpec",
    "GuardSpec",
    "HistoryOut",
    "MetricOut",
    "PolicySpec",
    "Problem",
    "Sample",
    "SampleBatch",
    "SampleRef",
    "Status",
    "StreamConfig",
    "StreamList",
    "StreamOut",
]
