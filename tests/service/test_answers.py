"""Answers with decisions are serialised straight from the Scaler's decisions (issue 32, the
write path: validating each into a model cost five times the serialising); the bytes must be
exactly those the documented response models give."""

from __future__ import annotations

import pytest

from scaling import Decision, Scaler
from service.answers import batch_answer, decision_out, history_answer
from service.models import BatchOut, HistoryOut


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
