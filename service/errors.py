"""The requests the service refuses, each as the status and body it is answered with.

Every refusal is a ``ServiceError``: a status, a sentence, and each field at fault
(``service.models.FieldError``); the app renders every one as a ``service.models.Problem``.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.exceptions import HTTPException

from service.models import FieldError, Sample, SampleRef
from service.shown import cut
from service.store import StorageUnavailable


class ServiceError(HTTPException):
    """A request the service refuses: a status, a sentence, and each field at fault.

    An ``HTTPException``, so that FastAPI passes it through unchanged even from inside body
    parsing; the app renders every one as a ``service.models.Problem``.
    """

    def __init__(
        self,
        status_code: int,
        message: str,
        errors: Sequence[FieldError] = (),
        *,
        sample: SampleRef | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        message = cut(message)
        super().__init__(status_code, message, headers)
        self.message = message
        self.errors = list(errors)
        self.sample = sample


class StreamNotFound(ServiceError):
    """No stream has this id (404)."""

    def __init__(self, stream_id: str) -> None:
        message = f"no stream has the id {stream_id!r}"
        allowed = "the id of an existing stream (PUT /v1/streams/{stream_id} creates one)"
        super().__init__(404, message, [FieldError.of("stream_id", stream_id, allowed, message)])


class NoDecision(ServiceError):
    """The stream exists but has not decided anything yet (404)."""

    def __init__(self, stream_id: str) -> None:
        message = f"stream {stream_id!r} has no decision yet: POST samples to it first"
        allowed = "a stream that has received at least one sample"
        super().__init__(404, message, [FieldError.of("stream_id", stream_id, allowed, message)])


class InvalidInput(ServiceError):
    """A configuration or a parameter that is not allowed (422)."""

    def __init__(self, errors: Sequence[FieldError]) -> None:
        super().__init__(422, "; ".join(error.message for error in errors), errors)


class BatchTooLarge(ServiceError):
    """More samples than the service takes in one request (413)."""

    def __init__(self, count: int, max_batch: int) -> None:
        allowed = f"at most {max_batch} samples per request (setting max_batch)"
        message = f"{count} samples in one request; {allowed}"
        super().__init__(413, message, [FieldError.of("samples", count, allowed, message)])


class BatchTooCostly(ServiceError):
    """A batch whose estimated work is over the setting ``work_budget`` (413)."""

    def __init__(self, count: int, fit: int, seconds: float, budget: float) -> None:
        allowed = (
            f"at most {fit} samples per request for this stream's configuration (about "
            f"{seconds:.3g} s of CPU per sample; setting work_budget: {budget:g} s)"
        )
        message = f"{count} samples in one request; {allowed}"
        super().__init__(413, message, [FieldError.of("samples", count, allowed, message)])


class SampleConflict(ServiceError):
    """A sample that contradicts what the stream has applied (409); ``sample`` is the
    culprit."""

    def __init__(
        self, index: int, sample: Sample, why: str, allowed: str, field: str = "t"
    ) -> None:
        message = f"samples[{index}] (t={sample.t!r}, volume={sample.volume!r}): {why}"
        value = getattr(sample, field)
        error = FieldError.of(f"samples[{index}].{field}", value, allowed, message)
        culprit = SampleRef(index=index, t=sample.t, volume=sample.volume)
        super().__init__(409, message, [error], sample=culprit)


class UnfollowableSample(ServiceError):
    """A sample the stream's Scaler cannot follow (422): what it computed from it is not a
    finite number, or its filter or policy refused it. Nothing of the batch is applied."""

    def __init__(self, index: int, sample: Sample, why: str) -> None:
        allowed = "a volume the stream's filter and policy can follow to finite values"
        message = f"samples[{index}].volume={sample.volume!r} cannot be followed: {why}"
        error = FieldError.of(f"samples[{index}].volume", sample.volume, allowed, message)
        culprit = SampleRef(index=index, t=sample.t, volume=sample.volume)
        super().__init__(422, message, [error], sample=culprit)


class ConfigConflict(ServiceError):
    """A PUT of another configuration onto an existing stream, without ``reset`` (409)."""

    def __init__(self, stream_id: str) -> None:
        allowed = (
            "true, to replace the stream and forget its state and history; or the stream's "
            "current configuration (GET it), which changes nothing"
        )
        message = (
            f"stream {stream_id!r} exists with another configuration; PUT with ?reset=true "
            "replaces it and forgets its state and history"
        )
        super().__init__(409, message, [FieldError.of("reset", False, allowed, message)])


class StoredConfigUnreadable(ServiceError):
    """A stream stored before the cost model whose policy cannot be mapped to it
    (``scaling.legacy``): it is neither changed nor served until it is PUT again (409)."""

    def __init__(self, stream_id: str, error: ValueError) -> None:
        field = getattr(error, "param", "policy")
        allowed = getattr(error, "allowed", str(error))
        message = (
            f"stream {stream_id!r} was stored before the cost model with a configuration it "
            f"cannot take ({error}); PUT a new configuration with ?reset=true"
        )
        value = getattr(error, "value", None)
        super().__init__(409, message, [FieldError.of(f"stored.{field}", value, allowed)])


class StoredFilterMissing(ServiceError):
    """A stored stream whose filter needs a package this service lacks (an image without the
    ``[filters]`` extra serving a database written by one with it): it is neither changed nor
    served until the package is installed or the stream is PUT again (409)."""

    def __init__(self, stream_id: str, error: FieldError) -> None:
        message = (
            f"stream {stream_id!r} is stored with {error.field}={error.value!r}, which this "
            f"service cannot run: {error.allowed}; or PUT another configuration with ?reset=true"
        )
        stored = error.model_copy(update={"field": f"stored.{error.field}"})
        super().__init__(409, message, [stored])


class Unavailable(ServiceError):
    """The storage cannot serve the request now (503); nothing was stored, retry later."""

    def __init__(self, error: StorageUnavailable) -> None:
        if error.in_doubt:
            # Not acknowledged, and perhaps not stored: a resend tells (it is a duplicate if
            # the commit went through).
            stored = "the commit's outcome is unknown; resend, a resend is never applied twice"
        else:
            stored = "nothing was stored; retry later"
        message = f"the storage is unavailable, {stored}: {error.reason}"
        super().__init__(503, message, headers={"Retry-After": "1"})


class StreamLocked(ServiceError):
    """Another batch of the stream held it longer than the setting ``lock_timeout`` (503);
    nothing of this batch was stored, retry later."""

    def __init__(self, stream_id: str, seconds: float) -> None:
        message = (
            f"stream {stream_id!r} was held by another batch for more than {seconds:g} s "
            "(setting lock_timeout); nothing was stored, retry later"
        )
        super().__init__(503, message, headers={"Retry-After": "1"})


class StreamContended(ServiceError):
    """Other writers (replicas) kept committing to the stream while this batch was applied
    (503); nothing of the batch was stored, retry later."""

    def __init__(self, stream_id: str, attempts: int) -> None:
        message = (
            f"stream {stream_id!r} kept changing in the database while the batch was applied "
            f"({attempts} attempts); nothing was stored, retry later"
        )
        super().__init__(503, message, headers={"Retry-After": "1"})


class ReplayMismatch(ServiceError):
    """Fed again the samples applied after its checkpoint (``service.checkpoints``), the
    stream's Scaler refused one it once took: the stream is not served (500), since it could
    not be brought back without dropping an acknowledged sample. Never the request's fault."""

    def __init__(self, stream_id: str, t: float, why: str) -> None:
        message = (
            f"stream {stream_id!r} cannot be loaded: replaying the sample at t={t!r} after its "
            f"checkpoint, {why}; nothing was stored. PUT its configuration with ?reset=true to "
            "start it afresh, and report this"
        )
        super().__init__(500, message)
