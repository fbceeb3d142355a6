"""Request and response bodies of the HTTP API, and the error body every 4xx uses.

Request bodies are strict: numbers must be JSON numbers (``"12"`` is not one), and unknown
fields are refused except in filter and guard specs, whose parameters the filter or guard checks.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, JsonValue

STREAM_ID_PATTERN = r"^[A-Za-z0-9._-]{1,128}$"
STREAM_ID_ALLOWED = "1 to 128 characters, each a letter, a digit, '.', '_' or '-'"


def _finite(value: object, allowed: str, minimum: float | None = None) -> object:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or (minimum is not None and value < minimum):  # type: ignore[arg-type, operator]
        raise ValueError(allowed)
    return value


def _check_t(value: object) -> object:
    return _finite(value, "t must be a finite number (seconds)")


def _check_volume(value: object) -> object:
    return _finite(value, "volume must be a finite number >= 0 (tuples/s)", minimum=0.0)


class ComponentSpec(BaseModel):
    """A filter or a guard: its ``name`` and its parameters, e.g. ``{"name": "tvd",
    "lam_per_sigma": 10}``; omitted parameters take their defaults."""

    model_config = ConfigDict(
        strict=True,
        extra="allow",
        json_schema_extra={"examples": [{"name": "tvd", "lam_per_sigma": 10.0}]},
    )

    name: str


class PolicySpec(BaseModel):
    """The threshold policy: operators needed = ceil(filtered volume / capacity), within the
    bounds."""

    model_config = ConfigDict(strict=True, extra="forbid")

    capacity: float = Field(description="Tuples/s one operator handles, > 0.")
    min_operators: int = Field(default=1, description="Fewest operators, >= 0.")
    max_operators: int | None = Field(
        default=None, description="Most operators, or null for no limit."
    )


class StreamConfig(BaseModel):
    """What ``PUT /v1/streams/{stream_id}`` takes: the stream's Scaler and its first count."""

    model_config = ConfigDict(strict=True, extra="forbid")

    filter: ComponentSpec = Field(description="The denoiser, e.g. {'name': 'tvd'}.")
    policy: PolicySpec
    guards: list[ComponentSpec] = Field(
        default=[],
        description="Guards applied in this order, e.g. [{'name': 'cooldown', 'down': 60}].",
    )
    operators: int = Field(
        default=1, description="Operators running before the first sample, >= 0."
    )


class Sample(BaseModel):
    """One volume sample."""

    model_config = ConfigDict(strict=True, extra="forbid")

    t: Annotated[float, BeforeValidator(_check_t)] = Field(
        description="Time, seconds from any origin; strictly increasing within a stream."
    )
    volume: Annotated[float, BeforeValidator(_check_volume)] = Field(
        description="Input volume, tuples/s, finite and >= 0."
    )


class SampleBatch(BaseModel):
    """What ``POST /v1/streams/{stream_id}/samples`` takes."""

    model_config = ConfigDict(strict=True, extra="forbid")

    samples: list[Sample] = Field(description="In increasing t; applied all or none.")


class DecisionOut(BaseModel):
    """What the stream's Scaler decided for one sample, and why."""

    t: float
    volume: float
    filtered: float = Field(description="The denoiser's output for the sample, tuples/s.")
    previous: int = Field(description="Operators before the decision.")
    operators: int = Field(description="Operators after the decision.")
    action: Literal["up", "down", "none"]
    reason: str


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


class StreamList(BaseModel):
    """Every stream, by id."""

    streams: list[StreamOut]


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
        "for numbers JSON cannot hold."
    )
    allowed: str = Field(description="What would be accepted.")
    message: str = Field(description="The whole story in one sentence.")

    @classmethod
    def of(cls, field: str, value: Any, allowed: str, message: str | None = None) -> FieldError:
        """The error for ``value`` at ``field``; the message says ``field=value is not allowed:
        allowed`` unless given.

        >>> FieldError.of("samples[0].volume", float("nan"), "volume must be >= 0").message
        'samples[0].volume=NaN is not allowed: volume must be >= 0'
        """
        shown = json_safe(value)
        if message is None:
            bare = isinstance(value, float) and not math.isfinite(value)
            text = str(shown) if bare else json.dumps(shown)
            text = text if len(text) <= 80 else text[:77] + "..."
            message = f"{field}={text} is not allowed: {allowed}"
        return cls(field=field, value=shown, allowed=allowed, message=message)


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


def json_safe(value: Any) -> JsonValue:
    """``value`` as JSON can hold it: non-finite floats as strings, other objects by ``repr``.

    >>> json_safe({"t": float("nan"), "volume": [1.0, float("-inf")], "x": object})
    {'t': 'NaN', 'volume': [1.0, '-Infinity'], 'x': "<class 'object'>"}
    """
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return repr(value)
