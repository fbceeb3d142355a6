"""The depth check on request bodies counts levels as a plain recursion does."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from service.body import MAX_DEPTH, _depth, parse_json
from service.errors import ServiceError


def plain_depth(document: Any) -> int:
    """Levels of containers, by recursion; a bare value counts as one level."""

    def levels(value: Any) -> int:
        if isinstance(value, dict):
            return 1 + max(map(levels, value.values()), default=0)
        if isinstance(value, list):
            return 1 + max(map(levels, value), default=0)
        return 0

    return max(levels(document), 1)


def document(chance: random.Random, deepest: int) -> Any:
    """A random document at most ``deepest`` levels deep: objects, arrays, empty ones, values."""
    kind = chance.randrange(5) if deepest > 1 else chance.randrange(3)
    if kind == 0:
        return chance.choice((1, 2.5, "[{", None, True))
    if kind == 1:
        return {}
    if kind == 2:
        return []
    members = [document(chance, deepest - 1) for _ in range(chance.randrange(1, 4))]
    return {f"k{i}": v for i, v in enumerate(members)} if kind == 3 else members


def nested(chance: random.Random, inner: Any, levels: int) -> Any:
    """``inner`` wrapped in ``levels`` objects and arrays, each with a shallow sibling or not."""
    for _ in range(levels):
        sibling = document(chance, 2)
        inner = chance.choice(({"samples": inner, "other": sibling}, [sibling, inner], [inner]))
    return inner


@pytest.mark.parametrize("seed", range(20))
def test_depth_is_the_plain_recursions_up_to_one_past_the_limit(seed: int) -> None:
    chance = random.Random(seed)
    for _ in range(200):
        body = nested(chance, document(chance, 5), chance.randrange(MAX_DEPTH + 4))
        # The check stops counting once past the limit; it only has to tell that.
        assert _depth(body) == min(plain_depth(body), MAX_DEPTH + 1)
        text = json.dumps(body).encode()
        if plain_depth(body) > MAX_DEPTH:
            with pytest.raises(ServiceError, match=f"nested more than {MAX_DEPTH} levels deep"):
                parse_json(text)
        else:
            assert parse_json(text) == body
