"""What the service answers: decisions, batches, streams and pages of them, and the error body
every 4xx uses.

Error bodies are bounded whatever the input: a ``FieldError`` shows the value received cut to
``SHOWN_CHARS`` characters of JSON and its sentences to ``TEXT_CHARS``, and a ``Problem`` lists
at most ``MAX_ERRORS`` of them (``service.app`` keeps the whole body under ``MAX_ERROR_BODY``).
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, Field, JsonValue

from scaling.decision import CODES
from service.pull.health import SourceHealth
from service.request_bodies import StreamConfig
from service.shown import SHOWN_CHARS, TEXT_CHARS, cut, shown

MAX_ERRORS = 20


class DecisionOut(BaseModel):
    """What the stream's Scaler decided for one sample, and why."""

    t: float
    volume: float
    filtered: float = Field(description="The denoiser's output for the sample, tuples/s.")
    previous: int = Field(description="Operators before the decision.")
    operators: int = Field(description="Operators after the decision.")
    action: Literal["up", "down", "none"]
    reason: str = Field(description="Prose written from code and explain.")
    backlog: float | None = Field(default=None, description="As reported with the sample.")
    running: int | None = Field(default=None, description="As reported with the sample.")
    processed: float | None = Field(default=None, description="As reported with the sample.")
    code: Literal[CODES] = Field(  # type: ignore[valid-type]
        default="Steady", description="Why the count came out as it did (scaling.decision)."
    )
    explain: dict[str, JsonValue] | None = Field(
        default=None,
        description="The inputs the decision used and, for a stream reporting its backlog, "
        "the expected cost terms of the count chosen and of one more and one fewer.",
    )


class BatchOut(BaseModel):
    """The answer to a batch of samples."""

    accepted: int = Field(description="Samples applied.")
    duplicates: int = Field(description="Samples already applied before, acknowledged again.")
    operators: int = Field(description="Operators the stream asks for now.")
    decisions: list[DecisionOut] = Field(description="One per accepted sample, in order.")


class StreamOut(BaseModel):
    """A stream: its configuration and where it stands."""

    id: str
    config: StreamConfig = Field(description="As given, with every default filled in.")
    operators: int = Field(description="Operators after the last decision (initial before any).")
    t: float | None = Field(description="Time of the last applied sample; null before any.")
    source_health: SourceHealth | None = Field(
        default=None, description="How polling its source goes; null without a source."
    )


class StreamList(BaseModel):
    """A page of streams, by id."""

    streams: list[StreamOut]
    next_after: str | None = Field(
        description="Pass as ?after= for the next page; null when this page is the last."
    )


class HistoryOut(BaseModel):
    """A page of a stream's decisions, oldest first."""

    decisions: list[DecisionOut]
    next_since: float | None = Field(
        description="Pass as ?since= for the next page; null when this page is the last."
    )


class MetricOut(BaseModel):
    """The stream's last decision for KEDA's metrics-api scaler (``valueLocation: value``)."""

    value: float = Field(description="Filtered volume of the last decision, tuples/s.")
    operators: int = Field(description="Operators the last decision asks for.")
    backlog: float | None = Field(
        default=None, description="Records waiting, as the last sample reported; null if not."
    )
    running: int | None = Field(
        default=None,
        description="Operators actually running, as the last sample reported; null if not.",
    )
    processed: float | None = Field(
        default=None, description="Records/s processed, as the last sample reported; null if not."
    )


class Status(BaseModel):
    """Liveness or readiness."""

    status: Literal["ok", "ready"]


class FieldError(BaseModel):
    """One thing wrong with a request."""

    field: str = Field(
        description="What was wrong: a path into the JSON body ('samples[3].volume', "
        "'filter.lam_per_sigma'), a path or query parameter ('stream_id', 'limit') or a header "
        "('Authorization')."
    )
    value: JsonValue = Field(
        description="The value received; null when missing, 'NaN', 'Infinity' or '-Infinity' "
        f"for numbers JSON cannot hold; a string of its first {SHOWN_CHARS} characters of "
        "JSON and '...' when longer."
    )
    allowed: str = Field(
        description=f"What would be accepted; at most {TEXT_CHARS} characters and '...'."
    )
    message: str = Field(
        description=f"The whole story in one sentence; at most {TEXT_CHARS} characters and '...'."
    )

    @classmethod
    def of(cls, field: str, value: Any, allowed: str, message: str | None = None) -> FieldError:
        """The error for ``value`` at ``field``; the message says ``field=value is not allowed:
        allowed`` unless given.

        >>> FieldError.of("samples[0].volume", float("nan"), "volume must be >= 0").message
        'samples[0].volume=NaN is not allowed: volume must be >= 0'
        """
        shown_value = shown(value)
        field, allowed = cut(field, SHOWN_CHARS), cut(allowed)
        if message is None:
            bare = isinstance(value, float) and not math.isfinite(value)
            text = str(shown_value) if bare else json.dumps(shown_value)
            text = text if len(text) <= 80 else text[:77] + "..."
            message = f"{field}={text} is not allowed: {allowed}"
        return cls(field=field, value=shown_value, allowed=allowed, message=cut(message))


class SampleRef(BaseModel):
    """A sample of the batch, by its position."""

    index: int
    t: float
    volume: float


class Problem(BaseModel):
    """The body of every error response."""

    status: int = Field(description="The HTTP status code.")
    error: str = Field(description="The HTTP reason phrase, e.g. 'Conflict'.")
    detail: str = Field(description="What went wrong, in one sentence.")
    errors: list[FieldError] = Field(
        default=[], description="Each field at fault, with its value and what is allowed."
    )
    sample: SampleRef | None = Field(
        default=None, description="409 only: the sample of the batch that conflicts."
    )
