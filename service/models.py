"""Request and response bodies of the HTTP API, and the error body every 4xx uses.

Request bodies are strict: numbers must be JSON numbers (``"12"`` is not one), and unknown
fields are refused except in filter and guard specs, whose parameters the filter or guard checks.
An integer field takes an integral number written either way (``3`` or ``3.0``, as JSON Schema
has it), like the filters' integer parameters.

Every number has bounds (``service.bounds``), and the OpenAPI document states them.

Error bodies are bounded whatever the input: a ``FieldError`` shows the value received cut to
``SHOWN_CHARS`` characters of JSON and its sentences to ``TEXT_CHARS``, and a ``Problem`` lists
at most ``MAX_ERRORS`` of them (``service.app`` keeps the whole body under ``MAX_ERROR_BODY``).
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, FailFast, Field, JsonValue

from filters import available_filters
from scaling import available_guards
from scaling.decision import CODES
from scaling.policy import (
    LATE_PRICE,
    LATENCY,
    OPERATION_PRICE,
    OPERATOR_PRICE,
    RESTART,
    RESTART_AVOIDANCE,
)
from service.bounds import (
    MAX_ABS_T,
    MAX_BACKLOG,
    MAX_CAPACITY,
    MAX_OPERATORS,
    MAX_PRICE,
    MAX_SECONDS,
    MAX_VOLUME,
    MIN_CAPACITY,
    MIN_PRICE,
    MIN_RISK,
    bounded,
    check_capacity,
    check_t,
    check_volume,
    count,
)
from service.pull.health import SourceHealth
from service.pull.spec import SourceSpec
from service.shown import SHOWN_CHARS, TEXT_CHARS, cut, shown

# Not '.' or '..' (clients that normalise paths could never reach them): no leading dot.
STREAM_ID_PATTERN = r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$"
STREAM_ID_ALLOWED = (
    "1 to 128 characters, each a letter, a digit, '.', '_' or '-', the first not '.'"
)

MAX_ERRORS = 20


class ComponentSpec(BaseModel):
    """A filter or a guard: its ``name`` and its parameters, e.g. ``{"name": "tvd",
    "lam_per_sigma": 10}``; omitted parameters take their defaults. The filter or guard checks
    its parameters (names, types, ranges) and names the one at fault."""

    model_config = ConfigDict(strict=True, extra="allow")

    name: str = Field(max_length=64)


class FilterSpec(ComponentSpec):
    """The denoiser: ``name`` one of ``filters.available_filters()``, and its parameters."""

    name: str = Field(
        max_length=64, json_schema_extra={"enum": list[JsonValue](available_filters())}
    )


class GuardSpec(ComponentSpec):
    """A guard: ``name`` one of ``scaling.available_guards()``, and its parameters."""

    name: str = Field(
        max_length=64, json_schema_extra={"enum": list[JsonValue](available_guards())}
    )


def seconds(default: float, minimum: float, description: str) -> Any:
    """The ``Field`` of a duration setting: ``minimum`` to ``MAX_SECONDS`` seconds."""
    return Field(default=default, ge=minimum, le=MAX_SECONDS, description=description)


class PolicySpec(BaseModel):
    """The threshold policy: operators needed = ceil(filtered volume / capacity), within the
    bounds."""

    model_config = ConfigDict(strict=True, extra="forbid")

    capacity: Annotated[float, BeforeValidator(check_capacity)] = Field(
        ge=MIN_CAPACITY, le=MAX_CAPACITY, description="Tuples/s one operator handles, > 0."
    )
    min_operators: Annotated[int, count("min_operators")] = Field(
        default=1, ge=0, le=MAX_OPERATORS, description="Fewest operators, >= 0."
    )
    max_operators: Annotated[int | None, count("max_operators")] = Field(
        default=None,
        ge=0,
        le=MAX_OPERATORS,
        description="Most operators (>= min_operators), or null for no limit.",
    )
    latency: Annotated[float, bounded("latency", 1e-3, MAX_SECONDS, "seconds")] = seconds(
        LATENCY,
        1e-3,
        "Queueing delay, seconds, over which a record of a stream reporting its backlog is late.",
    )
    restart: Annotated[float, bounded("restart", 0.0, MAX_SECONDS, "seconds")] = seconds(
        RESTART,
        0.0,
        "Seconds a scaling operation is assumed to stop processing until one has been "
        "measured from the samples' running and processed counts.",
    )
    operator_price: Annotated[float, bounded("operator_price", MIN_PRICE, MAX_PRICE, "a price")] = (
        Field(
            default=OPERATOR_PRICE,
            ge=MIN_PRICE,
            le=MAX_PRICE,
            description="Price of one operator-second (the unit of the other prices by default).",
        )
    )
    late_price: Annotated[
        float | None, bounded("late_price", 0.0, MAX_PRICE, "a price", nullable=True)
    ] = Field(
        default=None,
        ge=0.0,
        le=MAX_PRICE,
        description=f"Price of one second with records later than the latency; null: "
        f"{LATE_PRICE:g}, capped where a restart over the latency makes every operation late "
        f"(those seconds then cost at most {RESTART_AVOIDANCE:g} operator-seconds), unless "
        "late_probability is stated (stating both is refused).",
    )
    late_probability: Annotated[
        float | None,
        bounded("late_probability", MIN_RISK, 1.0, "a probability", nullable=True),
    ] = Field(
        default=None,
        ge=MIN_RISK,
        le=1.0,
        description="Instead of late_price: the largest expected share of the horizon with "
        "records late; the cheapest count within it is chosen.",
    )
    operation_price: Annotated[float, bounded("operation_price", 0.0, MAX_PRICE, "a price")] = (
        Field(
            default=OPERATION_PRICE,
            ge=0.0,
            le=MAX_PRICE,
            description="Price of one scaling operation beyond its restart.",
        )
    )


class StreamConfig(BaseModel):
    """What ``PUT /v1/streams/{stream_id}`` takes: the stream's Scaler and its first count."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "filter": {"name": "tvd", "lam_per_sigma": 10.0},
                    "policy": {"capacity": 50.0, "min_operators": 1, "max_operators": 100},
                    "guards": [{"name": "cooldown", "down": 60.0}],
                    "operators": 4,
                }
            ]
        },
    )

    filter: FilterSpec | None = Field(
        default=None,
        description="The denoiser, e.g. {'name': 'tvd'}. Left out: the recommended default "
        "(changepoint tuned to the capacity, and the confidence guard unless guards are given).",
    )
    policy: PolicySpec
    guards: list[GuardSpec] = Field(
        default=[],
        max_length=16,
        description="Guards applied in this order, e.g. [{'name': 'cooldown', 'down': 60}].",
    )
    operators: Annotated[int, count("operators")] = Field(
        default=1, ge=0, le=MAX_OPERATORS, description="Operators running before the first sample."
    )
    source: SourceSpec | None = Field(
        default=None,
        description="Poll these Prometheus queries for samples (docs/pull.md); the stream then "
        "takes no POSTed samples (409). Null: samples are POSTed.",
    )


class Sample(BaseModel):
    """One volume sample."""

    model_config = ConfigDict(strict=True, extra="forbid")

    t: Annotated[float, BeforeValidator(check_t)] = Field(
        ge=-MAX_ABS_T,
        le=MAX_ABS_T,
        description="Time, seconds from any origin; strictly increasing within a stream.",
    )
    volume: Annotated[float, BeforeValidator(check_volume)] = Field(
        ge=0.0, le=MAX_VOLUME, description="Input volume, tuples/s."
    )
    backlog: Annotated[
        float | None, bounded("backlog", 0.0, MAX_BACKLOG, "records", nullable=True)
    ] = Field(
        default=None,
        ge=0.0,
        le=MAX_BACKLOG,
        description="Records waiting (consumer lag, queue length); optional.",
    )
    running: Annotated[int | None, count("running")] = Field(
        default=None,
        ge=0,
        le=MAX_OPERATORS,
        description="Operators actually running now; optional.",
    )
    processed: Annotated[
        float | None, bounded("processed", 0.0, MAX_VOLUME, "records/s", nullable=True)
    ] = Field(default=None, ge=0.0, le=MAX_VOLUME, description="Records/s processed; optional.")


class SampleBatch(BaseModel):
    """What ``POST /v1/streams/{stream_id}/samples`` takes."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        json_schema_extra={
            "examples": [{"samples": [{"t": 12.0, "volume": 351.2}, {"t": 13.0, "volume": 344.0}]}]
        },
    )

    # FailFast: validation stops at the first bad sample, so a huge batch of bad samples
    # costs no more than its first error (and its error body stays small).
    samples: Annotated[list[Sample], FailFast()] = Field(
        description="In increasing t; applied all or none. A refusal names the first bad sample."
    )


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
