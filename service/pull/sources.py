"""A source's Prometheus, and the check a source passes at ``PUT`` before it is stored.

``check_source`` runs each query once, now, and refuses (422, naming the field and carrying
Prometheus' message, cut short) a query that does not parse or cannot run, returns several
series, a string or a range vector. A query with no series yet, or NaN, is accepted: the
metric may appear later, and each poll that meets it is reported as failed. Prometheus not
answering is 503 (nothing stored; try again), since the source cannot be checked.
"""

from __future__ import annotations

import asyncio
import time

import httpx

from service.errors import InvalidInput, ServiceError
from service.models import FieldError
from service.pull.prometheus import QueryFailed, query_value
from service.pull.settings import PullSettings, base_url
from service.pull.spec import REPORTS, SourceSpec

_URL_FIELD = "source.prometheus.url"
_QUERY_ALLOWED = "a PromQL query that returns one number (a scalar, or one series: aggregate)"


class UrlNotAllowed(ValueError):
    """The source names a base URL the service does not allow, or the service has none."""


def prometheus_base(source: SourceSpec, settings: PullSettings) -> str:
    """The base URL the source is polled at; ``UrlNotAllowed`` (a ``ValueError``) unless it is
    the setting ``prometheus_url`` or on ``prometheus_allowed_urls``."""
    given = source.prometheus.url
    if given is None:
        if settings.prometheus_url is None:
            raise UrlNotAllowed(
                "the service has no Prometheus: set STEADYSCALE_PROMETHEUS_URL, or name a URL "
                "on its setting prometheus_allowed_urls"
            )
        return settings.prometheus_url
    url = base_url(given)
    if url != settings.prometheus_url and url not in settings.prometheus_allowed_urls:
        raise UrlNotAllowed(
            f"{url[:100]!r} is not on the service's setting prometheus_allowed_urls "
            "(STEADYSCALE_PROMETHEUS_ALLOWED_URLS); leave url out for its prometheus_url"
        )
    return url


async def check_source(
    source: SourceSpec, settings: PullSettings, client: httpx.AsyncClient
) -> None:
    """Raise ``InvalidInput`` (422) naming each query Prometheus refuses or that cannot give
    one number, or the URL; ``ServiceError`` 503 if Prometheus does not answer."""
    try:
        base = prometheus_base(source, settings)
    except ValueError as error:
        raise InvalidInput([FieldError.of(_URL_FIELD, source.prometheus.url, str(error))]) from None
    queries = source.prometheus
    fields = [field for field in ("volume", *REPORTS) if getattr(queries, field) is not None]
    at = time.time()
    answers = await asyncio.gather(
        *(
            query_value(client, base, getattr(queries, field), at, settings.poll_timeout)
            for field in fields
        ),
        return_exceptions=True,
    )
    errors, unavailable = [], None
    for field, answer in zip(fields, answers, strict=True):
        if not isinstance(answer, QueryFailed):
            if isinstance(answer, BaseException):
                raise answer
            continue
        if answer.kind in ("refused", "shape"):
            name = f"source.prometheus.{field}"
            message = f"{name} is not allowed: Prometheus at {base}: {answer}"
            errors.append(FieldError.of(name, getattr(queries, field), _QUERY_ALLOWED, message))
        elif answer.kind == "unavailable":
            unavailable = answer
    if errors:
        raise InvalidInput(errors)
    if unavailable is not None:
        message = f"the source cannot be checked now, nothing was stored: {unavailable}"
        raise ServiceError(503, message, headers={"Retry-After": "5"})
