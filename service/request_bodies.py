"""What a client sends: a stream's configuration (``PUT /v1/streams/{stream_id}``) and its
samples (``POST .../samples``), and what a stream id may be.

Request bodies are strict: numbers must be JSON numbers (``"12"`` is not one), and unknown
fields are refused except in filter and guard specs, whose parameters the filter or guard checks.
An integer field takes an integral number written either way (``3`` or ``3.0``, as JSON Schema
has it), like the filters' integer parameters.

Every number has bounds (``service.bounds``), and the OpenAPI document states them.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, FailFast, Field, JsonValue

from filters import available_filters
from scaling import available_guards
from scaling.policy import (
    DELAY,
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
from service.pull.spec import SourceSpec

# Not '.' or '..' (clients that normalise paths could never reach them): no leading dot.
STREAM_ID_PATTERN = r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$"
STREAM_ID_ALLOWED = (
    "1 to 128 characters, each a letter, a digit, '.', '_' or '-', the first not '.'"
)


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
    delay: Annotated[float, bounded("delay", 0.0, MAX_SECONDS, "seconds")] = seconds(
        DELAY,
        0.0,
        "Seconds from a decision to its count running (a pod scheduled and started), assumed "
        "until one has been measured from the samples' running counts.",
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
