"""What the routers share to answer: documented problems, answers serialised once, decisions."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from fastapi import Response

from scaling import Decision
from service.models import DecisionOut, Problem


def problems(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` of the error ``codes`` a route may answer (as ``Problem``)."""
    return {code: {"model": Problem, "description": HTTPStatus(code).phrase} for code in codes}


def json_answer(body: bytes) -> Response:
    """An answer already serialised (by its response model, in a worker thread when large):
    FastAPI would otherwise validate and serialise it again, on the event loop."""
    return Response(body, media_type="application/json")


def decision_out(decision: Decision) -> DecisionOut:
    return DecisionOut.model_validate(decision, from_attributes=True)
