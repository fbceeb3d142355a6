"""What the routers share to answer: documented problems, answers serialised once, decisions."""

from __future__ import annotations

from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

import orjson
from fastapi import Response
from pydantic import TypeAdapter

from scaling import Decision
from service.models import DecisionOut, Problem

# Decisions serialised as the Scaler made them: Decision has DecisionOut's fields in its order,
# so the bytes are those of list[DecisionOut], without validating each decision into a model
# first, which cost five times the serialising itself (2.1 ms against 0.4 for 100 decisions;
# issue 32, 100-sample batches). orjson writes those bytes in a third of pydantic's time
# (decisions_json); pydantic's serialiser stays for what orjson does not take.
_DECISIONS = TypeAdapter(list[Decision])
_OPTIONAL_FLOAT = TypeAdapter(float | None)


def problems(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` of the error ``codes`` a route may answer (as ``Problem``)."""
    return {code: {"model": Problem, "description": HTTPStatus(code).phrase} for code in codes}


def json_answer(body: bytes) -> Response:
    """An answer already serialised (by its response model, in a worker thread when large):
    FastAPI would otherwise validate and serialise it again, on the event loop."""
    return Response(body, media_type="application/json")


def decision_out(decision: Decision) -> DecisionOut:
    return DecisionOut.model_validate(decision, from_attributes=True)


def decisions_json(decisions: Sequence[Decision]) -> bytes:
    """``decisions`` as JSON, byte for byte what ``list[DecisionOut]`` serialises.

    orjson writes a dataclass's fields in order, floats as their shortest repr (``1e+16``,
    ``1e-7``), NaN and ±inf as ``null``, strings as UTF-8 with the same escapes, as
    pydantic-core does (``tests/service/test_answers.py`` compares them on decisions of every
    filter, stored and read back, and on values of every kind): 48 against 158 us for 100
    decisions. A value orjson does not take (a numpy scalar in a record: no filter makes
    one) goes to pydantic, which does."""
    try:
        return orjson.dumps(decisions)
    except TypeError:
        return _DECISIONS.dump_json(list(decisions))


def batch_answer(
    accepted: int, duplicates: int, operators: int, decisions: Sequence[Decision]
) -> bytes:
    """A ``BatchOut`` as JSON, byte for byte what the model serialises."""
    head = f'{{"accepted":{accepted},"duplicates":{duplicates},"operators":{operators},"decisions":'
    return head.encode() + decisions_json(decisions) + b"}"


def history_answer(decisions: Sequence[Decision], next_since: float | None) -> bytes:
    """A ``HistoryOut`` as JSON, byte for byte what the model serialises."""
    tail = b',"next_since":' + _OPTIONAL_FLOAT.dump_json(next_since) + b"}"
    return b'{"decisions":' + decisions_json(decisions) + tail
