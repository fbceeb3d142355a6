"""The rows' JSON comes out as ``json.dumps`` writes it: the same string, the same errors."""

from __future__ import annotations

import json
import json.encoder
import math
import random
from typing import Any

import pytest

from scaling import Scaler
from service.rows import compact_json, decision_row, dumps_state, explain_json

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


def test_decision_rows_and_states_hold_json_dumps_strings() -> None:
    """Every explain a Scaler writes (a threshold's, a cost model's) and its state, as before."""
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
            row = decision_row(decision)
            assert row[-1] == json.dumps(decision.explain, separators=(",", ":"))
        state = scaler.state_dict()
        expected = json.dumps(state, separators=(",", ":"), allow_nan=False)
        assert dumps_state(state) == expected


def test_a_threshold_record_is_written_as_json_dumps_writes_it() -> None:
    """The records written directly, and every near miss, which goes to json's encoder."""
    chance = random.Random("threshold")
    numbers: list[Any] = [*FLOATS, *ODD, *[-x for x in FLOATS], None, 0, 7, -3, 10**30, True,
                          False, "1.0", chance.uniform(-1e9, 1e9)]  # fmt: skip
    records: list[Any] = []
    for _ in range(3000):
        inputs = {"filtered": chance.choice(numbers), "spread": chance.choice(numbers)}
        record = {"model": "threshold", "inputs": inputs, "needed": chance.choice(numbers)}
        roll = chance.random()
        if roll < 0.1:
            record = {"inputs": inputs, "model": "threshold", "needed": record["needed"]}
        elif roll < 0.2:
            inputs = {"spread": inputs["spread"], "filtered": inputs["filtered"]}
            record["inputs"] = inputs
        elif roll < 0.25:
            record["extra"] = 1
        elif roll < 0.3:
            del record[chance.choice(["needed", "inputs", "model"])]
        elif roll < 0.35:
            del inputs[chance.choice(["filtered", "spread"])]
        elif roll < 0.4:
            record["model"] = "cost"
        elif roll < 0.45:
            record["inputs"] = [1.0]
        records.append(record)
    direct = 0
    for record in records:
        assert explain_json(record) == json.dumps(record, separators=(",", ":")), record
        inputs = record.get("inputs")
        direct += (
            list(record) == ["model", "inputs", "needed"]
            and isinstance(inputs, dict)
            and list(inputs) == ["filtered", "spread"]
            and type(inputs["filtered"]) is float
            and math.isfinite(inputs["filtered"])
            and type(record["needed"]) is int
        )
    assert direct > 100  # the direct writing was compared, not only json's
