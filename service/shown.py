"""A value received, as an error body shows it: JSON-safe and bounded whatever was sent."""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import JsonValue

# Characters of a value's JSON that an error body shows.
SHOWN_CHARS = 200
# Characters of any sentence an error body holds (a field's name, what is allowed, a message):
# a filter's own error may quote the whole value it refused, and a field's name may be a key
# of any length the client chose.
TEXT_CHARS = 1000


def shown(value: Any) -> JsonValue:
    """``value`` for an error body: as is when its JSON is short, else the start of its JSON.

    >>> shown(list(range(100)))[:12], len(shown(list(range(100))))
    ('[0, 1, 2, 3,', 203)
    >>> shown(10**400)[:6]
    '100000'
    """
    safe = json_safe(value, depth=4)
    if isinstance(safe, bool | float) or safe is None:
        return safe
    text = safe if isinstance(safe, str) else json.dumps(safe)
    if len(text) <= SHOWN_CHARS:
        return safe
    return text[:SHOWN_CHARS] + "..."


def cut(text: str, limit: int = TEXT_CHARS) -> str:
    """``text``, or its first ``limit`` characters and '...' when longer.

    >>> cut("abcdef", 3)
    'abc...'
    """
    return text if len(text) <= limit else text[:limit] + "..."


def json_safe(value: Any, depth: int = 64) -> JsonValue:
    """``value`` as JSON can hold it: non-finite floats as strings, other objects by ``repr``.

    >>> json_safe({"t": float("nan"), "volume": [1.0, float("-inf")], "x": object})
    {'t': 'NaN', 'volume': [1.0, '-Infinity'], 'x': "<class 'object'>"}
    """
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**18:
        # Python refuses str() of integers above 4,300 digits; keep the head and the size.
        return _big_int(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    # Only the first items of containers and the first levels of nesting: enough to show,
    # bounded work whatever the input.
    if depth <= 0:
        return "..."
    if isinstance(value, dict):
        items = list(value.items())
        return {str(key): json_safe(item, depth - 1) for key, item in items[:SHOWN_CHARS]}
    if isinstance(value, list | tuple):
        return [json_safe(item, depth - 1) for item in value[:SHOWN_CHARS]]
    return repr(value)[:SHOWN_CHARS]


def _big_int(value: int) -> str:
    """The digits of ``value``, cut to ``SHOWN_CHARS``; Python refuses ``str()`` above 4,300."""
    if value.bit_length() < 14_000:
        text = str(value)
        return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}... ({len(text)} digits)"
    return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
