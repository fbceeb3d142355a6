"""The settings of pull mode: where Prometheus is, how to log in, and how hard to poll.

``PullSettings`` is a part of ``service.settings.Settings``, so each field is also the
environment variable ``STEADYSCALE_<FIELD>`` (``STEADYSCALE_PROMETHEUS_URL``, ...). A stream
stores its queries, never a URL or a credential: the base URL is ``prometheus_url``, or one of
``prometheus_allowed_urls`` that the stream names; the same credentials go to each.

>>> settings = PullSettings(prometheus_url="http://prometheus:9090/",
...                         prometheus_allowed_urls="http://a:9090, http://b:9090/")
>>> settings.prometheus_url, settings.prometheus_allowed_urls
('http://prometheus:9090', ['http://a:9090', 'http://b:9090'])
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic_settings import NoDecode

_URL_ALLOWED = "an http:// or https:// URL, without query or fragment"


def base_url(text: str) -> str:
    """``text`` as a base URL (no trailing slash); ``ValueError`` unless http(s)."""
    url = text.strip().rstrip("/")
    scheme, _, rest = url.partition("://")
    if scheme.lower() not in ("http", "https") or not rest or "?" in rest or "#" in rest:
        raise ValueError(f"{url[:100]!r} is not allowed: {_URL_ALLOWED}")
    return url


class PullSettings(BaseModel):
    """Prometheus' address and credentials, and the poller's limits."""

    prometheus_url: str | None = Field(
        default=None,
        description="Base URL of the Prometheus that streams with a source are polled from "
        "(its HTTP API is under /api/v1); unset: only streams that name an allowed URL poll.",
    )
    prometheus_allowed_urls: Annotated[list[str], NoDecode] = Field(
        default=[],
        description="Other base URLs a stream's source may name (comma-separated).",
    )
    prometheus_bearer_token_file: Path | None = Field(
        default=None,
        description="File holding a bearer token sent to Prometheus, read at every poll "
        "(so that a rotated token is used).",
    )
    prometheus_username: str | None = Field(
        default=None, description="Basic-auth user name for Prometheus."
    )
    prometheus_password_file: Path | None = Field(
        default=None,
        description="File holding the basic-auth password, read at every poll.",
    )
    poll_concurrency: int = Field(
        default=8, ge=1, le=256, description="Streams polled at once, at most."
    )
    poll_timeout: float = Field(
        default=5.0, gt=0, le=60, description="Seconds one query may take (else a failed poll)."
    )
    poll_delay: float = Field(
        default=1.0,
        ge=0,
        le=60,
        description="Seconds after an evaluation time before it is queried, so that the "
        "scrapes up to it have arrived.",
    )

    @field_validator("prometheus_url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        return None if value is None or not value.strip() else base_url(value)

    @field_validator("prometheus_allowed_urls", mode="before")
    @classmethod
    def _split_urls(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            value = json.loads(text) if text.startswith("[") else text.split(",")
        if isinstance(value, list):
            return [base_url(url) for url in value if isinstance(url, str) and url.strip()]
        return value

    @model_validator(mode="after")
    def _one_login(self) -> PullSettings:
        if self.prometheus_bearer_token_file is not None and self.prometheus_username:
            raise ValueError(
                "prometheus_bearer_token_file and prometheus_username are not allowed together: "
                "Prometheus gets a bearer token or basic auth, not both"
            )
        if (self.prometheus_username is None) != (self.prometheus_password_file is None):
            raise ValueError(
                "prometheus_username and prometheus_password_file go together: set both for "
                "basic auth, or neither"
            )
        return self
