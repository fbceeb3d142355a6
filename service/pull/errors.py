"""The refusals pull mode adds to the API."""

from __future__ import annotations

from service.errors import ServiceError
from service.models import FieldError


class PushRefused(ServiceError):
    """POST samples to a stream that polls its source (409): its samples come from the source
    alone, so that two writers never race on one stream's times."""

    def __init__(self, stream_id: str) -> None:
        message = f"stream {stream_id!r} polls its source for samples; it takes no POSTed samples"
        allowed = "a stream without a source (PUT it again without one, with ?reset=true)"
        super().__init__(409, message, [FieldError.of("stream_id", stream_id, allowed, message)])


class NotPolled(Exception):
    """A polled sample for a stream that has no source (any more): it was replaced or deleted
    since the poller listed it."""
