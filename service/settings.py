"""The service's settings: arguments, or ``STEADYSCALE_*`` environment variables.

>>> settings = Settings(data_dir="/tmp/steadyscale", tokens="alpha, beta")
>>> settings.tokens, settings.database
(['alpha', 'beta'], PosixPath('/tmp/steadyscale/steadyscale.db'))
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, cast

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from starlette.requests import Request


class Settings(BaseSettings):
    """Where the data lives, where to listen, who may call, and the size limits.

    Each field can be set from the environment variable ``STEADYSCALE_<FIELD>``, e.g.
    ``STEADYSCALE_DATA_DIR=/var/lib/steadyscale``. ``STEADYSCALE_TOKENS`` takes a comma-separated
    list (``alpha,beta``) or a JSON list.
    """

    model_config = SettingsConfigDict(env_prefix="STEADYSCALE_")

    data_dir: Path = Field(
        default=Path("data"), description="Directory of the SQLite file, created when missing."
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
        default=16 * 1024 * 1024, ge=1, description="Largest request body, bytes (else 413)."
    )
    retention: int = Field(
        default=100_000,
        ge=1,
        description="Samples and decisions kept per stream; older ones are pruned.",
    )
    fsync: bool = Field(
        default=False,
        description="Flush every commit to disk (SQLite synchronous=FULL), so acknowledged "
        "samples survive power loss too, at about 0.2 ms per write; off, they survive the "
        "process being killed.",
    )
    grpc_port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description="Also serve KEDA's external scaler protocol (gRPC) on this port, at host; "
        "off when unset.",
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
        if isinstance(value, str):
            text = value.strip()
            value = json.loads(text) if text.startswith("[") else text.split(",")
        if isinstance(value, list):
            stripped = [token.strip() if isinstance(token, str) else token for token in value]
            return [token for token in stripped if token != ""]
        return value

    @property
    def database(self) -> Path:
        """The SQLite file, ``data_dir / "steadyscale.db"``."""
        return self.data_dir / "steadyscale.db"


async def get_settings(request: Request) -> Settings:
    """The app's settings: the dependency that tests override.

    They are those given to ``service.app.create_app``, or ``Settings()`` from the environment,
    as the app's lifespan resolved them at start-up. An override (a function of no arguments)
    set before the app starts is what the lifespan resolves, so it also chooses the data
    directory.
    """
    return cast(Settings, request.state.settings)
