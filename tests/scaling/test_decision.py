"""``Decision.made`` builds the Decision that ``Decision(...)`` builds, by another way."""

from __future__ import annotations

import dataclasses
import inspect
import math
import pickle
import random
from typing import Any

import pytest

from scaling import Decision


def values(chance: random.Random) -> tuple[Any, ...]:
    reported = chance.random() < 0.5
    return (
        chance.choice([0.0, -0.0, 1e300, chance.uniform(-1e6, 1e6)]),
        chance.uniform(0.0, 1e6),
        chance.choice([math.nan, chance.uniform(0.0, 1e6)]),
        chance.randint(0, 100),
        chance.randint(0, 2**60),
        chance.choice(["up", "down", "none"]),
        chance.choice(["filtered 1.0 needs 1 = 1", ""]),
        chance.uniform(0.0, 1e9) if reported else None,
        chance.randint(0, 99) if reported else None,
        chance.uniform(0.0, 1e6) if reported else None,
        chance.choice(["Steady", "LimitedByGuard"]),
        chance.choice([None, {"model": "threshold", "inputs": {"spread": None}, "needed": 3}]),
    )


def test_made_takes_every_field_in_order_and_there_is_nothing_else_to_run() -> None:
    fields = [field.name for field in dataclasses.fields(Decision)]
    assert list(inspect.signature(Decision.made).parameters) == fields
    assert not hasattr(Decision, "__post_init__")


def test_made_and_the_constructor_build_the_same_decision() -> None:
    chance = random.Random(32)
    for _ in range(500):
        given = values(chance)
        plain, made = Decision(*given), Decision.made(*given)
        assert type(made) is Decision
        assert repr(made) == repr(plain)
        assert vars(made) == vars(plain) and list(vars(made)) == list(vars(plain))
        assert made.to_dict() == plain.to_dict() or math.isnan(plain.filtered)
        if not math.isnan(plain.filtered):
            assert made == plain
        if plain.explain is None:
            assert hash(made) == hash(plain)
        assert repr(pickle.loads(pickle.dumps(made))) == repr(plain)
        assert repr(dataclasses.replace(made, code="Steady")) == repr(
            dataclasses.replace(plain, code="Steady")
        )


def test_a_made_decision_is_frozen() -> None:
    made = Decision.made(0.0, 1.0, 1.0, 1, 1, "none", "", None, None, None, "Steady", None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.operators = 2  # type: ignore[misc]
