"""Answers with decisions are serialised straight from the Scaler's decisions (issue 32, the
write path: validating each into a model cost five times the serialising); the bytes must be
exactly those the documented response models give."""

from __future__ import annotations

import math

import numpy as np
import pytest

from filters import installed_filters
from scaling import Decision, Scaler
from service.answers import batch_answer, decision_out, decisions_json, history_answer
from service.models import BatchOut, HistoryOut
from service.rows import decision_row, stored_decision


def decisions() -> list[Decision]:
    """Decisions of every kind: the threshold and the cost model, with and without what the
    job reported, times from 0.1 to 1e15, a warming-up filter."""
    made = []
    for spec in ({"filter": {"name": "tvd"}, "policy": {"capacity": 50.0}},
                 {"policy": {"capacity": 50.0, "min_operators": 1}}):  # fmt: skip
        scaler = Scaler.from_spec(spec, 4)
        for index in range(60):
            t = 1e15 + index if index > 40 else 0.1 * index
            reported = {"backlog": 12.5 * index, "running": 3} if index % 3 else {}
            made.append(scaler.observe(300.0 + 37.0 * (index % 5), t, **reported))  # type: ignore[arg-type]
    return made


def test_a_batch_answer_is_byte_for_byte_the_model_s() -> None:
    made = decisions()
    model = BatchOut(accepted=len(made), duplicates=2, operators=7,
                     decisions=[decision_out(d) for d in made])  # fmt: skip
    assert batch_answer(len(made), 2, 7, made) == model.model_dump_json().encode()
    assert (
        batch_answer(0, 3, 1, [])
        == BatchOut(accepted=0, duplicates=3, operators=1, decisions=[]).model_dump_json().encode()
    )


@pytest.mark.parametrize("next_since", [None, 0.1, 1e15, 41.0])
def test_a_history_page_is_byte_for_byte_the_model_s(next_since: float | None) -> None:
    made = decisions()
    model = HistoryOut(decisions=[decision_out(d) for d in made], next_since=next_since)
    assert history_answer(made, next_since) == model.model_dump_json().encode()


def _model_bytes(made: list[Decision]) -> bytes:
    return b"[" + b",".join(decision_out(d).model_dump_json().encode() for d in made) + b"]"


@pytest.mark.parametrize("name", installed_filters())
def test_decisions_of_every_filter_are_the_model_s_bytes_as_made_and_as_stored(name: str) -> None:
    for reported in (False, True):
        scaler = Scaler.from_spec({"filter": {"name": name}, "policy": {"capacity": 50.0}}, 3)
        made = []
        for index in range(200):
            volume = 300.0 + 40.0 * math.sin(index) + (250.0 if index > 120 else 0.0)
            extra = {"backlog": 7.5 * index, "running": 3, "processed": 280.0} if reported else {}
            made.append(scaler.observe(volume, float(index), **extra))  # type: ignore[arg-type]
        read_back = [stored_decision(decision_row(d)) for d in made]
        assert decisions_json(made) == _model_bytes(made)
        assert decisions_json(read_back) == _model_bytes(made)


def test_values_of_every_kind_are_the_model_s_bytes() -> None:
    explain = {
        "model": "threshold",
        "inputs": {"filtered": math.nan, "spread": math.inf, "low": -math.inf, "zero": -0.0},
        "needed": 2**53,
        "texts": ["±", "\u2028", "\x00\x1f\x7f", '"\\/', "\U0001f600"],
        "numbers": [1e16, 1e-7, 5e-324, 1.7976931348623157e308, 123456789.125, 0, -1, True],
        "none": None,
    }
    odd = Decision(1e15, 0.0, 1e-300, 0, 2**53, "up", "x ± y\n", 1e15, 0, 0.0, "ScaledUp", explain)
    assert decisions_json([odd]) == _model_bytes([odd])
    assert decisions_json((odd, odd)) == _model_bytes([odd, odd])


def test_a_value_orjson_does_not_take_is_serialised_by_pydantic() -> None:
    numpy_record = Decision(1.0, 2.0, 2.0, 1, 1, "none", "r", explain={"x": np.float64(0.5)})
    huge = Decision(1.0, 2.0, 2.0, 1, 1, "none", "r", explain={"x": 2**70})
    for decision in (numpy_record, huge):
        assert decisions_json([decision]) == _model_bytes([decision])
