"""The rows' JSON: states as ``json.dumps`` writes them, the same string and the same errors;
a decision's record as orjson writes it, which reads back as the record."""

from __future__ import annotations

import json
import json.encoder
import math
import random
from typing import Any

import numpy as np
import pytest

from scaling import Scaler
from service.rows import compact_json, decision_row, dumps_state, explain_json, stored_decision

FLOATS = [0.0, -0.0, 1.0, -1.5, 5e-324, -5e-324, 1e308, 1.7976931348623157e308, 0.1, 1e16, 1e-7,
          296.1087661788744, 2.0**53 + 2, math.pi]  # fmt: skip
ODD = [math.nan, math.inf, -math.inf]
SCALARS: list[Any] = [None, True, False, 0, -1, 10**30, "", "a", 'q"uo\\te', "tab\tline\n",
                      "é ☃ 𝄞", "\x00\x1f", *FLOATS]  # fmt: skip


def value(chance: random.Random, depth: int = 0) -> Any:
    """A random JSON-ready tree: dicts (str and other keys), lists, tuples, scalars."""
    roll = chance.random()
    if depth >= 4 or roll < 0.5:
        return chance.choice([*SCALARS, chance.uniform(-1e6, 1e6), chance.randint(-(10**6), 10**6)])
    size = chance.randint(0, 4)
    if roll < 0.75:
        names = ["model", "needed", "x", "é", 1, 2.5, True, None]
        keys = [chance.choice(names) for _ in range(size)]
        return {key: value(chance, depth + 1) for key in keys}
    items = [value(chance, depth + 1) for _ in range(size)]
    return items if roll < 0.9 else tuple(items)


def plain(allow_nan: bool, thing: Any) -> tuple[str, str]:
    try:
        return ("ok", json.dumps(thing, separators=(",", ":"), allow_nan=allow_nan))
    except (ValueError, TypeError) as error:
        return (type(error).__name__, str(error))


def fast(encode: Any, thing: Any) -> tuple[str, str]:
    try:
        return ("ok", encode(thing))
    except (ValueError, TypeError) as error:
        return (type(error).__name__, str(error))


@pytest.mark.parametrize("c_encoder", (True, False), ids=("c-encoder", "no-c-encoder"))
@pytest.mark.parametrize("allow_nan", (True, False))
def test_compact_json_writes_what_json_dumps_writes(
    allow_nan: bool, c_encoder: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not c_encoder:  # as where json has no C encoder (not CPython): json's own, built once
        monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    encode = compact_json(allow_nan=allow_nan)
    chance = random.Random(f"rows {allow_nan}")
    things: list[Any] = [*SCALARS, *ODD, {"inputs": {"spread": math.nan}}, [math.inf], object(),
                         {"x": {1, 2}}, {(1, 2): 3}, [value(chance) for _ in range(3)]]  # fmt: skip
    things += [value(chance) for _ in range(2000)]
    refused = 0
    for thing in things:
        expected = plain(allow_nan, thing)
        assert fast(encode, thing) == expected, thing
        refused += expected[0] != "ok"
    assert refused >= 3  # the errors were compared too, not only the strings


def test_decision_rows_read_back_as_made_and_states_hold_json_dumps_strings() -> None:
    """Every explain a Scaler writes (a threshold's, a cost model's) reads back from its row as
    it was made; a state is written as ``json.dumps`` writes it (NaN refused)."""
    chance = random.Random(7)
    scalers = [
        Scaler.from_spec({"filter": {"name": "tvd"}, "policy": {"capacity": 50.0}}, 4),
        Scaler.from_spec({"policy": {"capacity": 50.0}}, 4),
    ]
    for scaler in scalers:
        for step in range(300):
            backlog = None if step < 150 else chance.uniform(0.0, 5000.0)
            decision = scaler.observe(max(0.0, chance.gauss(300.0, 80.0)), float(step),
                                      backlog=backlog)  # fmt: skip
            assert stored_decision(decision_row(decision)) == decision
        state = scaler.state_dict()
        expected = json.dumps(state, separators=(",", ":"), allow_nan=False)
        assert dumps_state(state) == expected


def _as_answered(thing: Any) -> Any:
    """``thing`` as the answers show it: NaN and ±inf as null, tuples as lists."""
    if isinstance(thing, dict):
        return {key: _as_answered(item) for key, item in thing.items()}
    if isinstance(thing, list | tuple):
        return [_as_answered(item) for item in thing]
    if isinstance(thing, float) and not math.isfinite(thing):
        return None
    return thing


def test_a_record_reads_back_as_the_answers_show_it() -> None:
    """Records of every shape (str keys, as a Decision's explain has): read back from the
    row's JSON, each is the record, its NaN and ±inf as the null the answers write; what orjson
    refuses (an integer past 64 bits, a numpy scalar) is written as ``json.dumps`` writes it."""
    chance = random.Random("records")
    records: list[Any] = [{"x": value(chance)} for _ in range(3000)]
    records = [{str(key): item for key, item in record.items()} for record in records]
    records += [{"inputs": {"filtered": x, "spread": y}} for x in FLOATS + ODD for y in ODD]
    for record in records:
        try:
            expected = _as_answered(json.loads(json.dumps(record, allow_nan=True)))
        except TypeError:  # keys json.dumps cannot write either
            continue
        assert json.loads(explain_json(record)) == expected, record
    for refused in ({"x": 10**30}, {"x": np.float64(0.5)}):
        assert explain_json(refused) == json.dumps(refused, separators=(",", ":"))
