"""The service's settings: arguments, or ``STEADYSCALE_*`` environment variables.

>>> settings = Settings(data_dir="/tmp/steadyscale", tokens="alpha, beta")
>>> settings.tokens, settings.database
(['alpha', 'beta'], PosixPath('/tmp/steadyscale/steadyscale.db'))
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, cast

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from starlette.requests import Request

from service.budget import WORK_BUDGET
from service.checkpoints import CHECKPOINT_SAMPLES, CHECKPOINT_SECONDS, MAX_CHECKPOINT_SAMPLES
from service.pull.settings import PullSettings


class Settings(BaseSettings, PullSettings):
    """Where the data lives, where to listen, who may call, and the size limits; and the
    Prometheus that streams with a source are polled from (``PullSettings``).

    Each field can be set from the environment variable ``STEADYSCALE_<FIELD>``, e.g.
    ``STEADYSCALE_DATA_DIR=/var/lib/steadyscale``. ``STEADYSCALE_TOKENS`` takes a comma-separated
    list (``alpha,beta``) or a JSON list.
    """

    # A refused value is never echoed: tokens and the database URL's password are secrets.
    model_config = SettingsConfigDict(env_prefix="STEADYSCALE_", hide_input_in_errors=True)

    data_dir: Path = Field(
        default=Path("data"), description="Directory of the SQLite file, created when missing."
    )
    database_url: str | None = Field(
        default=None,
        repr=False,
        description="postgresql://user:password@host:port/database: keep the streams in this "
        "PostgreSQL database, which several replicas of the service may share; unset, they "
        "are in the SQLite file under data_dir.",
    )
    host: str = Field(default="127.0.0.1", description="Address to listen on.")
    port: int = Field(default=8000, ge=0, le=65535, description="Port to listen on.")
    tokens: Annotated[list[str], NoDecode] = Field(
        default=[],
        repr=False,
        description="Bearer tokens; when any is set, every route but /healthz requires one.",
    )
    max_batch: int = Field(default=10_000, ge=1, description="Most samples per POST (else 413).")
    max_body_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        description="Largest request body, bytes (else 413); 1 MiB holds 10,000 samples.",
    )
    retention: int = Field(
        default=100_000,
        ge=1,
        description="Samples and decisions kept per stream; older ones are pruned.",
    )
    checkpoint_samples: int = Field(
        default=CHECKPOINT_SAMPLES,
        ge=1,
        le=MAX_CHECKPOINT_SAMPLES,
        description="Samples after which a stream's Scaler state is written again (a "
        "checkpoint; at most retention, fewer for a costly filter: service.checkpoints). Every "
        "sample is stored with its batch; loading a stream replays the samples since its "
        "checkpoint, so this bounds that work. 1 writes the state with every batch.",
    )
    checkpoint_seconds: float = Field(
        default=CHECKPOINT_SECONDS,
        gt=0,
        le=86400,
        description="Seconds after which a stream's next batch writes its state whatever the "
        "count of samples since the last checkpoint.",
    )
    cache_streams: int = Field(
        default=1024,
        ge=1,
        description="Streams whose Scaler stays in memory (the ones used last); the others "
        "are rebuilt from the database when they get samples.",
    )
    stream_metrics: int = Field(
        default=1000,
        ge=0,
        description="Streams with series of their own in /metrics (the first by id, then "
        "new ones while there is room); the rest are counted in steadyscale_streams_untracked.",
    )
    header_timeout: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        description="Seconds a connection may take to send a request's headers (else closed).",
    )
    body_timeout: float = Field(
        default=20.0,
        gt=0,
        le=3600,
        description="Seconds a connection may take to send a request's body once its headers "
        "are in (else closed); 1 MiB at 1 Mbit/s takes 8.",
    )
    busy_timeout: float = Field(
        default=5.0,
        gt=0,
        le=300,
        description="Seconds a write waits for another process's lock on the database "
        "(a backup, the sqlite3 shell), or for a PostgreSQL connection, before answering 503.",
    )
    work_budget: float = Field(
        default=WORK_BUDGET,
        gt=0,
        le=3600,
        description="Estimated CPU seconds one request may make a Scaler work (service.budget): "
        "a batch (413) or a what-if replay (422) above it is refused before any sample is fed, "
        "and a configuration (PUT) that cannot take 60 samples within it is refused (422).",
    )
    max_replays: int = Field(
        default=2,
        ge=1,
        le=64,
        description="What-if replays run at once, each in a worker thread; one more is answered "
        "503 with Retry-After.",
    )
    health_timeout: float = Field(
        default=5.0,
        gt=0,
        le=300,
        description="Seconds /healthz waits for a worker thread, and the most the event loop "
        "may run behind its timers, before /healthz answers 503 (the process is stuck).",
    )
    lock_timeout: float = Field(
        default=2.0,
        gt=0,
        le=300,
        description="Seconds a batch waits for its stream (another batch of it, in this process "
        "or, on PostgreSQL, any session holding its row) before answering 503 with Retry-After; "
        "PostgreSQL's lock_timeout.",
    )
    statement_timeout: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="Seconds a PostgreSQL statement may run before the server cancels it "
        "(503 with Retry-After); PostgreSQL's statement_timeout.",
    )
    fsync: bool = Field(
        default=False,
        description="Flush every commit to disk (SQLite synchronous=FULL), so acknowledged "
        "samples survive power loss too, at about 0.2 ms per write; off, they survive the "
        "process being killed.",
    )
    telemetry: bool = Field(
        default=False,
        description="FastAPI's own OpenTelemetry spans, metrics and logs, through the global "
        "providers that an OpenTelemetry SDK (e.g. opentelemetry-instrument) sets up; off, "
        "requests skip the check for them, about 5 us each.",
    )
    grpc_port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description="Also serve KEDA's external scaler protocol (gRPC) on this port, at host; "
        "off when unset.",
    )
    grpc_max_calls: int = Field(
        default=1000,
        ge=1,
        le=1_000_000,
        description="gRPC calls in progress at once (KEDA keeps a StreamIsActive open per "
        "ScaledObject); more are answered RESOURCE_EXHAUSTED.",
    )
    grpc_max_message_bytes: int = Field(
        default=64 * 1024,
        ge=1024,
        le=64 * 1024 * 1024,
        description="Largest gRPC message either way, bytes; larger ones are refused "
        "(RESOURCE_EXHAUSTED).",
    )
    staleness: float = Field(
        default=120.0,
        gt=0,
        description="Seconds without a new sample after which the KEDA scaler answers a "
        "stream's metric and activity with UNAVAILABLE, so that KEDA's fallback applies.",
    )

    @field_validator("tokens", mode="before")
    @classmethod
    def _split_tokens(cls, value: Any) -> Any:
        given = value
        if isinstance(value, str):
            text = value.strip()
            if not text:
                return []
            value = json.loads(text) if text.startswith("[") else text.split(",")
        if isinstance(value, list):
            stripped = [token.strip() if isinstance(token, str) else token for token in value]
            tokens = [token for token in stripped if token != ""]
            if value and not tokens:
                # ' , ' would otherwise switch authentication off without a word.
                raise ValueError(
                    f"tokens={given!r} holds no token: give at least one non-blank token, or "
                    "leave STEADYSCALE_TOKENS unset for no authentication"
                )
            return tokens
        return value

    @field_validator("database_url")
    @classmethod
    def _postgresql_only(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("postgresql://", "postgres://")):
            # Never echo the URL: it may hold a password.
            raise ValueError(
                "database_url must be a postgresql:// (or postgres://) URL; leave it unset for "
                "the SQLite file under data_dir"
            )
        return value or None

    @model_validator(mode="after")
    def _retention_holds_a_batch(self) -> Settings:
        # A client resends a batch it got no answer for; its samples are recognised as
        # duplicates only while they are retained.
        if self.retention < self.max_batch:
            raise ValueError(
                f"retention={self.retention} is not allowed with max_batch={self.max_batch}: "
                "retention must be >= max_batch, so that a resent batch is recognised"
            )
        return self

    @property
    def database(self) -> Path:
        """The SQLite file, ``data_dir / "steadyscale.db"``."""
        return self.data_dir / "steadyscale.db"


def settings_from(given: dict[str, Any], options: dict[str, str]) -> Settings:
    """``Settings(**given)`` over the environment; a refused value as one line.

    The ``ValueError`` names the option (``options`` maps a field to it, e.g. ``--port``) when
    the value was ``given``, else the environment variable; then the value, unless it is a
    secret (tokens, the database URL), and what is allowed.

    >>> settings_from({"port": 99999}, {"port": "--port"})
    Traceback (most recent call last):
    ...
    ValueError: --port=99999 is not allowed: Input should be less than or equal to 65535
    """
    try:
        return Settings(**given)
    except ValidationError as error:
        first = error.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else ""
        allowed = first["msg"].removeprefix("Value error, ")
        if not field:  # a rule across settings: its message names them
            raise ValueError(allowed) from None
        if field in given:
            where, value = options.get(field, field), given[field]
        else:
            where = f"{Settings.model_config['env_prefix']}{field.upper()}"
            value = next((v for k, v in os.environ.items() if k.upper() == where), "")
        shown = "" if field in _SECRET else f"={str(value)[:100]}"
        raise ValueError(f"{where}{shown} is not allowed: {allowed}") from None


# Settings whose values are never shown in a message.
_SECRET = frozenset({"tokens", "database_url"})


async def get_settings(request: Request) -> Settings:
    """The app's settings: the dependency that tests override.

    They are those given to ``service.app.create_app``, or ``Settings()`` from the environment,
    as the app's lifespan resolved them at start-up. An override (a function of no arguments)
    set before the app starts is what the lifespan resolves, so it also chooses the data
    directory.
    """
    return cast(Settings, request.state.settings)
