"""The one spec grammar: filters, guards and policies written as text on the command line.

A spec is JSON (an object: ``{"name": "tvd", "lam_per_sigma": 10}``) or ``name`` or
``name:key=value,key=value``, each value read as JSON when it can be (``60``, ``0.05``,
``[250, 450]``, ``null``, ``true``), as a number when it can be (``.5``), else kept as text.
Where grids make sense (``expand_spec``: sweeps, comparisons), ``|`` separates alternatives:
``tvd:lam_per_sigma=5|10,method=exact`` is two specs, and a JSON list of objects is one spec per
object. A guard set joins guards with ``+`` (``hysteresis:band=0.02+cooldown:down=60``), or is a
JSON list of guard objects; ``none`` is the empty set.

>>> parse_spec("cooldown:up=30,down=120", "guard")
{'name': 'cooldown', 'up': 30, 'down': 120}
>>> parse_spec('{"name": "tvd", "lam": 40}')
{'name': 'tvd', 'lam': 40}
>>> expand_spec("tvd:lam_per_sigma=5|10,method=exact")
[{'name': 'tvd', 'lam_per_sigma': 5, 'method': 'exact'},
 {'name': 'tvd', 'lam_per_sigma': 10, 'method': 'exact'}]
>>> expand_guard_sets("none"), len(expand_guard_sets("hysteresis:band=0.01|0.02+cooldown"))
([[]], 2)
>>> parse_spec("tvd:lam=5|10")
Traceback (most recent call last):
...
ValueError: filter spec 'tvd:lam=5|10' is one filter: '|' (a grid) is allowed by sweep and ...
"""

from __future__ import annotations

import itertools
import json
from typing import Any


def parse_value(text: str) -> Any:
    """A JSON value (``60``, ``0.05``, ``[250, 450]``, ``null``), a number, else the text."""
    for convert in (json.loads, float):
        try:
            return convert(text)
        except ValueError:  # json.JSONDecodeError is one
            pass
    return text


def parse_spec(text: str, kind: str = "filter") -> dict[str, Any]:
    """Exactly one spec (no grid) from ``text``."""
    specs = _specs(text, kind, grid=False)
    if len(specs) != 1:
        raise ValueError(f"{kind} spec {text!r} is a list: give one {kind}")
    return specs[0]


def expand_spec(text: str, kind: str = "filter") -> list[dict[str, Any]]:
    """Every spec of the grid ``text`` writes (``|`` alternatives, or a JSON list)."""
    return _specs(text, kind, grid=True)


def parse_guard_set(text: str) -> list[dict[str, Any]]:
    """One guard set: ``none``, guards joined by ``+``, or a JSON list of guard objects."""
    sets = _guard_sets(text, grid=False)
    return sets[0]


def expand_guard_sets(text: str) -> list[list[dict[str, Any]]]:
    """Every guard set of the grid ``text`` writes (each guard may carry ``|`` alternatives)."""
    return _guard_sets(text, grid=True)


def _guard_sets(text: str, grid: bool) -> list[list[dict[str, Any]]]:
    stripped = text.strip()
    if stripped == "none":
        return [[]]
    if stripped.startswith("["):
        return [_json(stripped, "guard set", list)]
    per_guard = [_specs(part, "guard", grid) for part in stripped.split("+")]
    return [list(combination) for combination in itertools.product(*per_guard)]


def _specs(text: str, kind: str, grid: bool) -> list[dict[str, Any]]:
    stripped = text.strip()
    if stripped.startswith("{"):
        return [_json(stripped, f"{kind} spec", dict)]
    if stripped.startswith("["):
        specs: list[dict[str, Any]] = _json(stripped, f"{kind} spec", list)
        if not all(isinstance(spec, dict) for spec in specs):
            raise ValueError(f"{kind} spec {text!r}: a JSON list must hold objects only")
        return specs
    name, _, options = stripped.partition(":")
    if not name or not name.replace("_", "").isalnum():
        raise ValueError(
            f"{kind} spec {text!r} has no name: write NAME, NAME:KEY=VALUE,... or a JSON object"
        )
    keys, choices = [], []
    for option in options.split(",") if options else []:
        key, equals, values = option.partition("=")
        if not equals or not key.strip() or not values.strip():
            raise ValueError(f"{kind} spec {text!r}: {option!r} is not of the form key=value")
        if "|" in values and not grid:
            raise ValueError(
                f"{kind} spec {text!r} is one {kind}: '|' (a grid) is allowed by sweep and "
                "compare only"
            )
        keys.append(key.strip())
        choices.append([parse_value(value.strip()) for value in values.split("|")])
    return [
        {"name": name, **dict(zip(keys, combination, strict=True))}
        for combination in itertools.product(*choices)
    ]


def _json(text: str, what: str, kind: type) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{what} {text!r} is not valid JSON: {error}") from None
    if not isinstance(value, kind):
        raise ValueError(f"{what} {text!r} must be a JSON {kind.__name__}")
    return value
