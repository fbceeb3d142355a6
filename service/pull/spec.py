"""What a stream's ``source`` says: the Prometheus queries it is polled with, and its fallback.

Part of the ``PUT /v1/streams/{stream_id}`` body (``service.models.StreamConfig.source``)::

    {"prometheus": {"volume": "sum(rate(kafka_topic_partition_current_offset[1m]))",
                    "backlog": "sum(kafka_consumergroup_lag{consumergroup=\\"app\\"})",
                    "interval": 15},
     "fallback": {"failures": 4, "operators": 6}}

Only the queries are stored with the stream. The Prometheus base URL and its credentials are
service settings (``service.pull.settings``); ``url`` may name another base URL only if that
URL is on the setting ``prometheus_allowed_urls`` (checked at PUT, ``service.pull.check``).

>>> SourceSpec.model_validate({"prometheus": {"volume": "vector(300)"}}).prometheus.interval
15.0
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from service.bounds import MAX_OPERATORS, bounded, count

MIN_INTERVAL = 1.0
MAX_INTERVAL = 3600.0
MAX_QUERY_CHARS = 4096
MAX_FAILURES = 10_000

# The reports a source may query besides the volume, by the Sample field each fills.
REPORTS = ("backlog", "running", "processed")


def _query(description: str) -> str | None:
    return Field(default=None, min_length=1, max_length=MAX_QUERY_CHARS, description=description)


class PrometheusQueries(BaseModel):
    """PromQL queries, each evaluated at one time and aggregated to one value; the Sample
    field of the same name gets that value."""

    model_config = ConfigDict(strict=True, extra="forbid")

    volume: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description="Input volume, tuples/s, e.g. sum(rate(kafka_topic_partition_current_offset"
        '{topic="orders"}[1m])).',
    )
    backlog: str | None = _query("Records waiting, e.g. sum(kafka_consumergroup_lag{...}).")
    running: str | None = _query(
        "Operators running now, e.g. kube_deployment_status_replicas_available{...}."
    )
    processed: str | None = _query("Records/s processed.")
    interval: Annotated[float, bounded("interval", MIN_INTERVAL, MAX_INTERVAL, "seconds")] = Field(
        default=15.0,
        ge=MIN_INTERVAL,
        le=MAX_INTERVAL,
        description="Seconds between evaluation times; each is a multiple of the interval.",
    )
    url: str | None = Field(
        default=None,
        min_length=1,
        max_length=2048,
        description="Another Prometheus base URL than the service's (setting "
        "prometheus_url); allowed only if on the setting prometheus_allowed_urls.",
    )


class Fallback(BaseModel):
    """What the decision goes to while the source fails, as KEDA's ``fallback`` does."""

    model_config = ConfigDict(strict=True, extra="forbid")

    failures: Annotated[int, count("failures")] = Field(
        ge=1, le=MAX_FAILURES, description="Consecutive failed polls before the fallback applies."
    )
    operators: Annotated[int, count("operators")] = Field(
        ge=0, le=MAX_OPERATORS, description="Operators the decision asks for meanwhile."
    )


class SourceSpec(BaseModel):
    """Where the service reads a stream's samples from, instead of having them POSTed."""

    model_config = ConfigDict(strict=True, extra="forbid")

    prometheus: PrometheusQueries
    fallback: Fallback | None = Field(
        default=None,
        description="After this many consecutive failures, decide this many operators; "
        "null: hold the last count for as long as the source fails.",
    )
